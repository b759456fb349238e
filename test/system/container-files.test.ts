/**
 * The container files at the repository's root (issue 38; docs/deployment.md, "A container"):
 * the Dockerfile runs the Node major the project runs on (the `node` dependency's, this test's
 * runtime's, .nvmrc's), in a multi-stage build with production dependencies only, as a user
 * other than root, with a HEALTHCHECK on the liveness probe and `npm start`'s node flags;
 * compose.yaml parses and starts the app only once PostgreSQL and Redis answer their health
 * checks. Docker is not needed: the files are read.
 *
 * The project has no YAML parser among its own dependencies, so compose.yaml is read by the
 * strict subset below (block mappings and sequences, flow sequences, plain and quoted scalars,
 * comments): anything outside it, a tab, a bad indent or a repeated key fails the test.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

const root = new URL('../../', import.meta.url);
const read = (name: string) => readFileSync(new URL(name, root), 'utf8');
const runtimeMajor = process.versions.node.split('.')[0];

type Yaml = string | number | boolean | null | Yaml[] | { [key: string]: Yaml };

/** A compose file's YAML: the block style it is written in, strictly. */
function parseYamlSubset(text: string): Yaml {
  const lines = text
    .split('\n')
    .map((raw, index) => {
      if (raw.includes('\t')) throw new Error(`line ${index + 1}: a tab`);
      const content = stripComment(raw).trimEnd();
      return { n: index + 1, indent: content.length - content.trimStart().length, text: content.trim() };
    })
    .filter((l) => l.text !== '');
  let at = 0;
  const block = (indent: number): Yaml => {
    const first = lines[at];
    if (first.indent !== indent) throw new Error(`line ${first.n}: indented ${first.indent}, expected ${indent}`);
    if (first.text.startsWith('- ')) {
      const items: Yaml[] = [];
      while (at < lines.length && lines[at].indent === indent && lines[at].text.startsWith('- '))
        items.push(scalar(lines[at++].text.slice(2), lines[at - 1].n));
      return items;
    }
    const map: { [key: string]: Yaml } = {};
    while (at < lines.length && lines[at].indent === indent) {
      const line = lines[at++];
      const m = /^([A-Za-z0-9_.-]+):(?: (.*))?$/.exec(line.text);
      if (!m) throw new Error(`line ${line.n}: not "key: value": ${line.text}`);
      if (m[1] in map) throw new Error(`line ${line.n}: the key ${m[1]} twice`);
      if (m[2] !== undefined) map[m[1]] = scalar(m[2], line.n);
      else if (at < lines.length && lines[at].indent > indent) map[m[1]] = block(lines[at].indent);
      else map[m[1]] = null;
    }
    if (at < lines.length && lines[at].indent > indent) throw new Error(`line ${lines[at].n}: unexpected indent`);
    return map;
  };
  const value = block(0);
  if (at !== lines.length) throw new Error(`line ${lines[at].n}: outdented below the document`);
  return value;
}

function stripComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quote) {
      if (ch === quote) quote = undefined;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '#' && (i === 0 || line[i - 1] === ' ')) return line.slice(0, i);
  }
  if (quote) throw new Error(`an unterminated quote: ${line}`);
  return line;
}

function scalar(text: string, n: number): Yaml {
  if (text.startsWith('[')) {
    // a flow sequence of double-quoted strings (exec-form commands): JSON's syntax
    try {
      const items: unknown = JSON.parse(text);
      if (Array.isArray(items) && items.every((s) => typeof s === 'string')) return items;
    } catch {
      /* below */
    }
    throw new Error(`line ${n}: a flow sequence outside the subset: ${text}`);
  }
  if (text.startsWith('{') || text.startsWith('&') || text.startsWith('*') || text.startsWith('|') || text.startsWith('>') || text.startsWith('!')) {
    throw new Error(`line ${n}: outside the subset: ${text}`);
  }
  if (text.startsWith('"')) {
    if (!/^"(?:[^"\\]|\\.)*"$/.test(text)) throw new Error(`line ${n}: a bad double-quoted string: ${text}`);
    return JSON.parse(text) as string;
  }
  if (text.startsWith("'")) {
    if (!/^'(?:[^']|'')*'$/.test(text)) throw new Error(`line ${n}: a bad single-quoted string: ${text}`);
    return text.slice(1, -1).replaceAll("''", "'");
  }
  if (/: |:$/.test(text)) throw new Error(`line ${n}: a plain scalar with ": " (a nested mapping on one line?): ${text}`);
  if (/^-?[0-9]+$/.test(text)) return Number(text);
  if (text === 'true' || text === 'false') return text === 'true';
  if (text === 'null' || text === '~') return null;
  return text;
}

/** The Dockerfile's instructions, continuation lines joined, comments dropped. */
function instructions(dockerfile: string): Array<{ op: string; args: string }> {
  return dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const [op, ...rest] = l.split(/\s+/);
      return { op: op.toUpperCase(), args: rest.join(' ') };
    });
}

describe('the container files', () => {
  const dockerfile = instructions(read('Dockerfile'));
  const pkg = JSON.parse(read('package.json')) as { dependencies: Record<string, string>; scripts: Record<string, string> };

  it("build on the Node major the project runs on: the node dependency's, this runtime's and .nvmrc's", () => {
    const froms = dockerfile.filter((i) => i.op === 'FROM').map((i) => i.args);
    assert.ok(froms.length >= 2, 'multi-stage');
    for (const from of froms) assert.match(from, new RegExp(`^node:${runtimeMajor}[-.\\s]`), `${from}: Node ${runtimeMajor}`);
    assert.equal(/^\^?(\d+)\./.exec(pkg.dependencies.node)?.[1], runtimeMajor, "package.json's node dependency");
    assert.equal(read('.nvmrc').trim().split('.')[0], runtimeMajor, '.nvmrc');
  });

  it("run production dependencies only, as a user other than root, with npm start's node flags and a liveness HEALTHCHECK", () => {
    const runtime = dockerfile.slice(dockerfile.findLastIndex((i) => i.op === 'FROM'));
    const installs = runtime.filter((i) => i.op === 'RUN' && /\bnpm (ci|install)\b/.test(i.args));
    assert.equal(installs.length, 1, 'one install in the final stage');
    assert.match(installs[0].args, /--omit=dev\b/);
    const user = runtime.filter((i) => i.op === 'USER').at(-1);
    assert.ok(user && !/^(root|0)(:|$)/.test(user.args), `runs as ${user?.args ?? 'root'}`);
    const health = runtime.find((i) => i.op === 'HEALTHCHECK');
    assert.ok(health, 'a HEALTHCHECK');
    assert.match(health.args, /\/api\/health\/live\b/);
    const cmd = JSON.parse(runtime.find((i) => i.op === 'CMD')!.args) as string[];
    const start = /\bnode ((?:--\S+ )*)dist\/server\.js/.exec(pkg.scripts.start);
    assert.ok(start, 'npm start runs dist/server.js');
    assert.deepEqual(cmd, ['node', ...start[1].trim().split(' '), 'dist/server.js'], 'the flags of npm start');
    assert.match(read('.dockerignore'), /^node_modules$/m, "the host's node_modules stays out of the image");
  });

  it('compose.yaml parses, and starts the app once PostgreSQL and Redis are healthy', () => {
    const compose = parseYamlSubset(read('compose.yaml')) as { services: Record<string, Record<string, any>> };
    const { app, postgres, redis } = compose.services;
    assert.ok(app && postgres && redis, 'app, postgres, redis');
    assert.equal(app.build, '.');
    assert.deepEqual(app.depends_on, { postgres: { condition: 'service_healthy' }, redis: { condition: 'service_healthy' } });
    for (const [name, service] of [
      ['postgres', postgres],
      ['redis', redis],
    ] as const) {
      assert.ok(Array.isArray(service.healthcheck?.test) && service.healthcheck.test[0] === 'CMD', `${name} has a health check`);
    }
    assert.match(app.environment.DATABASE_URL, /^postgres:\/\/[^@]+@postgres:5432\//, 'the database is the postgres service');
    assert.match(app.environment.REDIS_URL, /^redis:\/\/redis:6379/, 'Redis is the redis service');
    assert.match(app.environment.JWT_SECRET, /^\$\{JWT_SECRET:\?/, 'no default secret: compose refuses to start without one');
  });

  it('the subset parser refuses what it does not read', () => {
    for (const bad of ['a:\n\tb: 1', 'a: 1\na: 2', 'a:\n  b: 1\n c: 2', 'a: {b: 1}', 'a: "open', 'a: b: c', '- x\ny: 1']) {
      assert.throws(() => parseYamlSubset(bad), Error, JSON.stringify(bad));
    }
    assert.deepEqual(parseYamlSubset('a: 1 # one\nb:\n  - "x"\n  - y\nc: ["CMD", "z"]\nd: \'it\'\'s\''), { a: 1, b: ['x', 'y'], c: ['CMD', 'z'], d: "it's" });
  });

  it('docs/deployment.md points at them and no older Node', () => {
    const docs = read('docs/deployment.md');
    assert.match(docs, /\bDockerfile\b/);
    assert.match(docs, /\bcompose\.yaml\b/);
    assert.doesNotMatch(docs, /FROM node:(?!24\b)\d+/);
  });
});

/**
 * `npm run remove:resource -- <name> [--plural <word>] [--drop-table]`: takes out what
 * `new:resource` wrote and changed (docs/resources.md), except its migration, which a database
 * may have run: afterwards the tree differs from the one before the generation only in
 * src/db/'s migrations. With `--drop-table`, a new migration drops the table (and its rows);
 * without it they stay. Refuses with one line and changes nothing.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, globSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { registerMigration, respell, TEMPLATE_DIR, type FileChange } from './files.js';
import { names, regularPlural, SpecError, type Names } from './spec.js';

const root = process.cwd();
const read = (path: string) => readFileSync(join(root, path), 'utf8');

/** The plural the resource was made with: `--plural`, else what its schemas name, else the regular one. */
function pluralOf(name: string, given: string | undefined): string {
  if (given) return given;
  for (const file of globSync('src/*/schemas.ts', { cwd: root })) {
    const match = new RegExp(`resourceSchemas\\(\\{ name: '${name}', plural: '([a-z0-9-]+)' \\}`).exec(read(file));
    if (match) return match[1];
  }
  return regularPlural(name);
}

function withoutLine(text: string, line: string, where: string): string {
  const lines = text.split('\n');
  const index = lines.indexOf(line);
  if (index < 0) throw new SpecError(`${where} has no line "${line.trim()}": was it changed by hand? Nothing was removed`);
  lines.splice(index, 1);
  return lines.join('\n');
}

/** The client's FEATURES list without the resource's feature, on one line (the formatter lays it out). */
function withoutFeature(app: string, feature: string): string {
  const list = /export const FEATURES: readonly Feature\[\] = \[([^\]]*)\];/.exec(app);
  if (!list) throw new SpecError('src/client/app.ts has no FEATURES list: nothing was removed');
  const items = list[1]
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!items.includes(feature)) throw new SpecError(`src/client/app.ts does not list ${feature}: nothing was removed`);
  return app.replace(list[0], `export const FEATURES: readonly Feature[] = [${items.filter((i) => i !== feature).join(', ')}];`);
}

/** src/db/schema.ts without the resource's table type (its comment, its interface, the blank line after) and its entry. */
function withoutTable(schema: string, name: Names): string {
  const lines = schema.split('\n');
  const start = lines.indexOf(`export interface ${name.pascal}Table {`);
  if (start < 1) throw new SpecError(`src/db/schema.ts has no ${name.pascal}Table: nothing was removed`);
  const end = lines.indexOf('}', start);
  lines.splice(start - 1, end - start + 3);
  return withoutLine(lines.join('\n'), `  ${name.snake}: ${name.pascal}Table;`, 'src/db/schema.ts');
}

function plan(args: string[]): { removed: string[]; changes: FileChange[] } {
  const dropTable = args.includes('--drop-table');
  const pluralAt = args.indexOf('--plural');
  const name = args.find((a, i) => !a.startsWith('--') && !(pluralAt >= 0 && i === pluralAt + 1));
  if (!name) throw new SpecError('usage: npm run remove:resource -- <name> [--plural <word>] [--drop-table]');
  const unknown = args.find((a) => a.startsWith('--') && a !== '--drop-table' && a !== '--plural');
  if (unknown) throw new SpecError(`unknown option ${unknown}`);
  const plural = names(pluralOf(name, pluralAt >= 0 ? args[pluralAt + 1] : undefined));
  const single = names(name);
  if (!existsSync(join(root, `src/${plural.kebab}/module.ts`))) throw new SpecError(`no resource "${name}": src/${plural.kebab}/module.ts does not exist`);
  // dist/: what `npm run build` compiled of it (ignored by git, but `npm start` would keep serving a stale copy's files)
  const removed = [`src/${plural.kebab}`, `src/client/${plural.kebab}`, `test/${plural.kebab}`, `docs/${plural.kebab}.md`, `dist/${plural.kebab}`].filter((p) =>
    existsSync(join(root, p)),
  );

  let system = withoutLine(read('src/system.ts'), `import { ${plural.camel}Module } from './${plural.kebab}/module.js';`, 'src/system.ts');
  system = withoutLine(system, `  ${plural.camel}Module,`, 'src/system.ts');
  let app = withoutLine(read('src/client/app.ts'), `import { ${plural.camel} } from './${plural.kebab}/feature.js';`, 'src/client/app.ts');
  app = withoutFeature(app, plural.camel);
  const changes: FileChange[] = [
    { path: 'src/system.ts', content: system, changed: true },
    { path: 'src/client/app.ts', content: app, changed: true },
    { path: 'src/db/schema.ts', content: withoutTable(read('src/db/schema.ts'), single), changed: true },
  ];
  if (dropTable) {
    const next = String(Math.max(...globSync('src/db/migrations/*.ts', { cwd: root }).map((f) => Number(/(\d{4})_/.exec(f)?.[1] ?? 0))) + 1).padStart(4, '0');
    const id = `${next}_drop_${plural.snake}`;
    const template = read(join(TEMPLATE_DIR, 'src/db/migrations/0000_drop_sample_items.ts'));
    changes.push({ path: `src/db/migrations/${id}.ts`, content: respell(template, { name: single, plural }), changed: false });
    changes.push(registerMigration(root, id));
  }
  return { removed, changes };
}

try {
  const { removed, changes } = plan(process.argv.slice(2));
  for (const path of removed) rmSync(join(root, path), { recursive: true });
  for (const change of changes) {
    mkdirSync(dirname(join(root, change.path)), { recursive: true });
    writeFileSync(join(root, change.path), change.content);
  }
  const biome = join(root, 'node_modules/.bin/biome');
  if (existsSync(biome)) spawnSync(biome, ['format', '--write', ...changes.map((c) => c.path)], { cwd: root, stdio: 'ignore' });
  for (const path of removed) console.log(`  removed  ${path}`);
  for (const change of changes) console.log(`  ${change.changed ? 'changed' : 'new    '}  ${change.path}`);
  console.log('The migration that made the table stays (a database may have run it).');
} catch (err) {
  if (!(err instanceof SpecError)) throw err;
  console.error(`remove:resource: ${err.message}`);
  process.exit(1);
}

/**
 * The heavy optional packages load when their feature is configured or first used, not at start
 * (docs/performance.md, "The embedded default's footprint"): the real server as a child process,
 * with a preloaded hook that writes down every package the process loads.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startChildServer, type ChildServer } from '../support/child-server.js';

/** what a server with nothing optional configured must not load */
const OPTIONAL = [
  '@node-saml/node-saml',
  'xml-crypto',
  '@xmldom/xmldom',
  '@simplewebauthn/server',
  'nodemailer',
  'ioredis',
  'stripe',
  '@opentelemetry/sdk-trace',
  'prom-client',
  'oidc-provider',
];

/** Node's module hooks (both import and require): each package's name, appended to `file` the first time it loads. */
const RECORDER = `
import { registerHooks } from 'node:module';
import { appendFileSync } from 'node:fs';
const seen = new Set();
registerHooks({
  load(url, context, next) {
    const name = /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(url)?.[1];
    if (name && !seen.has(name)) { seen.add(name); appendFileSync(process.env.LOADED_PACKAGES_FILE, name + '\\n'); }
    return next(url, context);
  },
});
`;

/** The server with the recorder preloaded; `loaded()` reads what it has loaded so far. */
async function recordedServer(env: Record<string, string> = {}): Promise<{ server: ChildServer; loaded: () => Promise<Set<string>> }> {
  const dir = await mkdtemp(join(tmpdir(), 'saas-lazy-'));
  const recorder = join(dir, 'recorder.mjs');
  const file = join(dir, 'loaded.txt');
  await writeFile(recorder, RECORDER);
  await writeFile(file, '');
  const server = await startChildServer({ env: { NODE_OPTIONS: `--import ${recorder}`, LOADED_PACKAGES_FILE: file, ...env } });
  const dispose = server.dispose;
  server.dispose = async () => {
    await dispose();
    await rm(dir, { recursive: true, force: true });
  };
  return { server, loaded: async () => new Set((await readFile(file, 'utf8')).split('\n').filter(Boolean)) };
}

describe('optional packages load when used', () => {
  const servers: ChildServer[] = [];
  after(async () => {
    await Promise.all(servers.map((s) => s.dispose()));
  });

  it('are not loaded by a server with nothing optional configured, and the first passkey ceremony loads its library', async () => {
    const { server, loaded } = await recordedServer();
    servers.push(server);
    const atStart = await loaded();
    // the recorder works: what every server loads is in the list
    assert.ok(atStart.has('fastify') && atStart.has('kysely'), `recorded: ${[...atStart].join(' ')}`);
    assert.deepEqual(
      OPTIONAL.filter((name) => atStart.has(name)),
      [],
    );

    const res = await fetch(`http://127.0.0.1:${server.port}/api/auth/passkey/options`, { method: 'POST' });
    assert.equal(res.status, 200);
    assert.ok(((await res.json()) as { options: { challenge: string } }).options.challenge);
    assert.ok((await loaded()).has('@simplewebauthn/server'));
  });

  it('are loaded at start when their feature is configured: SMTP and Redis', async () => {
    const { server, loaded } = await recordedServer({
      MAIL_URL: 'smtp://127.0.0.1:2525',
      REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    });
    servers.push(server);
    const atStart = await loaded();
    assert.ok(atStart.has('nodemailer'));
    assert.ok(atStart.has('ioredis'));
    assert.ok(!atStart.has('@node-saml/node-saml'));
  });
});

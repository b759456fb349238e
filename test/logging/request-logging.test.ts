import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../../src/config.js';
import { loadAll } from '../support/settings.js';
import { ConsoleHandler, formatPretty } from '../../src/logging/console-handler.js';
import { DEFAULT_REDACT_KEYS } from '../../src/logging/redact.js';
import { logIn, signUp } from '../support/auth.js';
import { ALL_FORMATS } from '../support/http.js';
import { probeRoutes } from '../support/probes.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

/** The 1-based line of the first occurrence of `needle` in a source file. */
async function sourceLine(file: string, needle: string): Promise<number> {
  const lines = (await readFile(new URL(`../../src/${file}`, import.meta.url), 'utf8')).split('\n');
  const i = lines.findIndex((l) => l.includes(needle));
  assert.ok(i >= 0, `${needle} in ${file}`);
  return i + 1;
}

const db = testDatabases()[0];

describe('request logging', () => {
  let t: TestSystem;
  before(async () => {
    t = await startSystem(db, { LOG_LEVELS: 'saas.*=trace' }, { extraRouteGroups: [probeRoutes()] });
  });
  after(async () => t?.stop());

  it('writes entries with exactly the spec fields, ISO timestamps and the TypeScript source line', async () => {
    await t.client('GET', '/api/health');
    const entries = await t.logEntries();
    for (const e of entries) {
      assert.deepEqual(Object.keys(e).sort(), ['ctx', 'data', 'id', 'level', 'line', 'msg', 'ns', 'timestamp']);
      assert.match(e.timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      assert.match(e.id, /^[a-z0-9.-]+\/[a-z0-9.-]+$/);
      assert.ok(['trace', 'debug', 'info', 'warn', 'error', 'fatal'].includes(e.level));
    }
    const response = entries.find((e) => e.id === 'api-call/response')!;
    assert.equal(response.line, await sourceLine('http/response-log.ts', "log.info('api-call/response'"));
    const ready = entries.find((e) => e.id === 'db/ready')!;
    assert.equal(ready.line, await sourceLine('db/database.ts', "log.info('db/ready'"));
  });

  it('routes third-party logs (Fastify) through the same backend as slf4j signals', async () => {
    const entries = await t.logEntries();
    const fastify = entries.find((e) => e.ns === 'fastify' && /listening/i.test(e.msg));
    assert.ok(fastify, 'Fastify says it is listening');
    assert.equal(fastify.level, 'info');
  });

  it('gives entries from code without the request object the request context, and the user once a token is decoded', async () => {
    const { email, id } = await signUp(t.client);
    const login = await logIn(t.client, email);
    await t.client('GET', '/api/account/me', { headers: { authorization: `Bearer ${login.body['access-token']}` } });
    const entries = await t.logEntries();
    const signedUp = entries.find((e) => e.id === 'account/signed-up' && e.data['account-id'] === id)!;
    const signUpResponse = entries.find((e) => e.id === 'api-call/response' && e.ctx['req-id'] === signedUp.ctx['req-id'])!;
    assert.equal(signUpResponse.msg, 'POST /api/account/sign-up => 201');
    assert.equal(signedUp.ctx.uri, '/api/account/sign-up');
    const me = entries.filter((e) => e.id === 'api-call/response' && e.ctx.uri === '/api/account/me').at(-1)!;
    assert.deepEqual(me.ctx.user, { id, email });
  });

  it('logs a request the client abandons, once, as 499', async () => {
    await new Promise<void>((resolve) => {
      const req = httpRequest(new URL('/api/probe/slow', t.url));
      req.on('error', () => resolve());
      req.end();
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 100);
    });
    await sleep(700);
    const entries = (await t.logEntries()).filter((e) => e.id === 'api-call/response' && e.ctx.uri === '/api/probe/slow');
    assert.equal(entries.length, 1);
    assert.equal(entries[0].data.status, 499);
    assert.equal(entries[0].msg, 'GET /api/probe/slow => 499');
  });

  it('logs every request of a connection that closes before their answers as 499 (pipelined too)', async () => {
    const { port } = new URL(t.url);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    const get = (query: string) => `GET /api/probe/slow?pipelined=${query} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
    socket.write(get('first') + get('second'));
    await sleep(100);
    socket.destroy();
    await sleep(700);
    const entries = (await t.logEntries()).filter((e) => e.id === 'api-call/response' && (e.ctx.params as { pipelined?: string })?.pipelined);
    assert.deepEqual(entries.map((e) => [(e.ctx.params as { pipelined: string }).pipelined, e.data.status]).sort(), [
      ['first', 499],
      ['second', 499],
    ]);
  });

  it('leaves no secret in the log from any format or place', async () => {
    const secrets: string[] = [];
    const secretFor = (where: string, key: string) => {
      const value = `S3CRET-${where}-${key}-${secrets.length}`;
      secrets.push(value);
      return value;
    };
    for (const format of ALL_FORMATS) {
      const body: Record<string, unknown> = {};
      for (const key of DEFAULT_REDACT_KEYS) body[key] = secretFor(format.name, key);
      body.nested = { deeper: { password: secretFor(format.name, 'nested') } };
      await t.client('POST', '/api/probe/anything', { format, body });
    }
    const query = DEFAULT_REDACT_KEYS.map((k) => `${k}=${secretFor('query', k)}`).join('&');
    const form = DEFAULT_REDACT_KEYS.map((k) => `${k}=${secretFor('form', k)}`).join('&');
    await t.client('POST', `/api/probe/anything?${query}`, {
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Bearer ${secretFor('header', 'authorization')}`,
        'x-csrf-token': secretFor('header', 'csrf'),
        'stripe-signature': secretFor('header', 'stripe'),
        cookie: `refresh-token=${secretFor('cookie', 'refresh')}; session=${secretFor('cookie', 'session')}`,
      },
      body: form,
    });
    const log = await t.logText();
    assert.ok(log.includes('api-call/request'), 'the debug request entry with headers and cookies was written');
    for (const secret of secrets) assert.ok(!log.includes(secret), `found ${secret}`);
  });
});

describe('logging configuration', () => {
  it('prod writes the JSON file at logs/saas-app.json with the spec limits', () => {
    const config = loadConfig({ APP_ENV: 'prod', JWT_SECRET: 'x'.repeat(32), MAIL_URL: 'smtp://127.0.0.1:2525' });
    assert.deepEqual(config.logFile, { path: 'logs/saas-app.json', interval: 'daily', maxFileSize: 104_857_600, maxNumParts: 10, maxNumIntervals: 30 });
    assert.equal(config.logConsole, 'json');
    assert.equal(loadConfig({ APP_ENV: 'dev' }).logFile, undefined);
    assert.equal(loadConfig({ APP_ENV: 'dev' }).logConsole, 'pretty');
  });

  it('formats a readable console line in dev', () => {
    const line = formatPretty(
      {
        timestamp: '2026-11-22T10:11:12.345Z',
        level: 'info',
        id: 'api-call/response',
        msg: 'GET /api/health => 200',
        ns: 'saas.http',
        line: 42,
        data: { status: 200 },
        ctx: { 'req-id': '0123456789abcdef' },
      },
      false,
    );
    assert.equal(line, '10:11:12.345 INFO  saas.http:42 api-call/response GET /api/health => 200 {"status":200} [01234567]\n');
  });

  it('escapes control characters in every console field, so input cannot forge a line or colour the terminal', () => {
    const hostile = 'x\n11:59:59.999 WARN  saas.account:1 account/forged It happened\r\x1b[31mred\u2028sep\x7f\x9b\u202e';
    const entry = {
      timestamp: '2026-11-22T10:11:12.345Z',
      level: 'info' as const,
      id: `api-call/response${hostile}`,
      msg: `GET /a${hostile}`,
      ns: `saas.http${hostile}`,
      line: 42,
      data: { [`key${hostile}`]: `value${hostile}` },
      ctx: { 'req-id': '0123\n6789abcdef' },
    };
    for (const line of [formatPretty(entry, false), formatPretty(entry, true)]) {
      assert.equal(line.indexOf('\n'), line.length - 1, 'one line, ended by its own newline');
      // the only ESC left is the level's own colour
      assert.doesNotMatch(line.replace(/\x1b\[\d+m/g, ''), /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202e]/);
      assert.ok(line.includes('GET /ax\\n11:59:59.999 WARN') && line.includes('\\r\\u001b[31mred\\u2028sep\\u007f\\u009b\\u202e'), line);
    }
    const lines: string[] = [];
    new ConsoleHandler('json', { write: (s: string) => lines.push(s) } as unknown as NodeJS.WritableStream).write(entry, 'log');
    assert.equal(lines[0].indexOf('\n'), lines[0].length - 1);
    assert.doesNotMatch(lines[0].slice(0, -1), /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202e]/);
    assert.deepEqual(JSON.parse(lines[0]).msg, entry.msg, 'still JSON, with the same content');
  });

  it('rejects bad configuration naming the variable', () => {
    assert.throws(() => loadConfig({ PORT: 'eighty' }), /PORT/);
    assert.throws(() => loadConfig({ APP_ENV: 'prod' }), /JWT_SECRET/);
    assert.throws(() => loadConfig({ LOG_FILE_INTERVAL: 'hourly', LOG_FILE: 'x.json' }), /LOG_FILE_INTERVAL/);
    assert.throws(() => loadAll({ LOGIN_LIMIT_EMAIL: 'ten' }), /LOGIN_LIMIT_EMAIL/);
    assert.throws(() => loadConfig({ DATABASE_URL: 'mysql://x' }), /DATABASE_URL/);
  });
});

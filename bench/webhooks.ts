/**
 * `npm run bench:webhooks`: the outgoing webhooks' costs (issue 28's benchmark), standalone
 * while bench/run.ts is being split (fold it in as a scenario there later).
 *
 *  1. Emitting: the CPU time per request of a member role change (PATCH
 *     /api/orgs/:id/members/:accountId, alternating admin and member, so every request changes
 *     the role and emits `member.updated`) with no live endpoint, against the same with an
 *     endpoint taking the type: (a) emitting only (the message and its delivery written in the
 *     request's transaction; the worker is stopped meanwhile, its backlog drained unmeasured), the
 *     issue's target of at most 10 % more CPU per request; (b) emitting and delivering (this
 *     instance's worker makes the deliveries to a local receiver, measured until the queue is
 *     empty again), the whole cost of a webhook to the instance. Rounds alternate.
 *  2. Deliveries per second from one instance to a local receiver: N messages committed at once,
 *     timed until the last is recorded delivered.
 *
 * The system runs in this process from the compiled code (`dist/`), as `npm start` runs it; the
 * load (autocannon) and the receiver run in processes of their own, so this process's CPU time is
 * the server's. PGlite in memory, or PostgreSQL with BENCH_DATABASE_URL (a fresh database is made
 * and dropped). BENCH_DURATION (seconds per measurement, default 5), BENCH_CONNECTIONS (default
 * 10), BENCH_ROUNDS (default 3), BENCH_DELIVERIES (default 2000).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freshDatabase } from './fresh-database.js';

const compiled = <T>(path: string): Promise<T> => import(new URL(`../dist/${path}`, import.meta.url).href) as Promise<T>;
const { loadConfig } = await compiled<typeof import('../src/config.js')>('config.js');
const { buildSystem } = await compiled<typeof import('../src/system.js')>('system.js');
const { emitWebhookEvent } = await compiled<typeof import('../src/webhooks/outbox.js')>('webhooks/outbox.js');
const { webhooksModule } = await compiled<typeof import('../src/webhooks/module.js')>('webhooks/module.js');

const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 2000);
const PASSWORD = 'bench password 0123456789';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** A fresh PostgreSQL database from BENCH_DATABASE_URL, or an in-memory PGlite. */
async function database(): Promise<{ url: string; drop(): Promise<void> }> {
  const base = process.env.BENCH_DATABASE_URL;
  return base ? freshDatabase(base, 'bench_webhooks') : { url: 'memory://', drop: async () => undefined };
}

/** A receiver in its own process answering 204 to everything; resolves to its URL. */
async function startReceiver(): Promise<{ url: string; stop(): void }> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `
    const s = require('node:http').createServer((req, res) => { req.resume(); req.on('end', () => res.writeHead(204).end()); });
    s.keepAliveTimeout = 1000;
    s.listen(0, '127.0.0.1', () => console.log(s.address().port));`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const port = await new Promise<string>((resolve) => child.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim())));
  return { url: `http://127.0.0.1:${port}/hook`, stop: () => child.kill() };
}

interface LoadResult {
  requests: number;
  rps: number;
  non2xx: number;
  errors: number;
}

/** autocannon in its own process, cycling through `requests` on every connection. */
function load(
  url: string,
  requests: Array<{ method: string; path: string; headers: Record<string, string>; body: string }>,
  duration: number,
): Promise<LoadResult> {
  const script = `
    const autocannon = require('autocannon');
    const opts = JSON.parse(process.env.LOAD);
    autocannon(opts, (err, r) => { if (err) throw err; console.log(JSON.stringify({ requests: r.requests.total, rps: r.requests.average, non2xx: r.non2xx, errors: r.errors })); });`;
  const child = spawn(process.execPath, ['-e', script], {
    env: { ...process.env, LOAD: JSON.stringify({ url, connections: CONNECTIONS, duration, requests }) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d;
  });
  return new Promise((resolve, reject) =>
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as LoadResult) : reject(new Error(`autocannon exited ${code}`)))),
  );
}

const dir = await mkdtemp(join(tmpdir(), 'saas-bench-webhooks-'));
const db = await database();
const receiver = await startReceiver();
const config = loadConfig({
  APP_ENV: 'test',
  PORT: '0',
  HOST: '127.0.0.1',
  DATABASE_URL: db.url,
  JWT_SECRET: 'bench-secret-0123456789abcdefghijklmnop',
  LOG_FILE: join(dir, 'saas-app.json'),
  LOG_CONSOLE: 'off',
  LOG_LEVELS: 'saas.webhooks=warn',
  SIGNUP_LIMIT_ADDRESS: '0',
  LOGIN_LIMIT_EMAIL: '0',
  LOGIN_LIMIT_ADDRESS: '0',
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_CONCURRENCY: '20',
});
const system = await buildSystem(config);
const base = await system.listen();

async function api(method: string, path: string, body?: unknown, token?: string): Promise<any> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

async function person(label: string): Promise<{ id: string; email: string; token: string }> {
  const email = `${label}-${randomBytes(4).toString('hex')}@example.com`;
  const { account } = await api('POST', '/api/account/sign-up', { email, password: PASSWORD, name: label });
  const [mail] = await system.mail.mailbox.list({ to: email, kind: 'verify-email' });
  const token = decodeURIComponent(/[?&]token=([^\s&"<]+)/.exec(mail.text ?? '')![1]);
  await api('POST', '/api/account/verify-email', { token });
  const { 'access-token': access } = await api('POST', '/api/account/log-in', { email, password: PASSWORD });
  return { id: account.id, email, token: access };
}

const results: Record<string, unknown> = { database: db.url.startsWith('postgres') ? 'postgres' : 'pglite', connections: CONNECTIONS, duration: DURATION };
try {
  const owner = await person('owner');
  const member = await person('member');
  const org = await api('POST', '/api/orgs', { name: 'Bench' }, owner.token);
  await api('POST', `/api/orgs/${org.id}/invitations`, { email: member.email, role: 'member' }, owner.token);
  const [invite] = await system.mail.mailbox.list({ to: member.email, kind: 'invitation' });
  await api('POST', '/api/invitations/accept', { token: decodeURIComponent(/[?&]token=([^\s&"<]+)/.exec(invite.text ?? '')![1]) }, member.token);
  const endpoint = await api('POST', `/api/orgs/${org.id}/webhooks`, { url: receiver.url, events: ['member.updated'] }, owner.token);
  const setEndpoint = (enabled: boolean) => api('PATCH', `/api/orgs/${org.id}/webhooks/${endpoint.id}`, { enabled }, owner.token);
  const pending = async () =>
    Number(
      (
        await system.database.db
          .selectFrom('webhook_delivery')
          .where('status', '=', 'pending')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const roleChange = (role: string) => ({
    method: 'PATCH',
    path: `/api/orgs/${org.id}/members/${member.id}`,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.token}` },
    body: JSON.stringify({ role }),
  });
  const requests = [roleChange('admin'), roleChange('member')];

  const worker = system.services(webhooksModule).worker;
  type Measured = { cpu: number; rps: number; failed: number };
  /** CPU per request over a load and, with `drained`, until its deliveries are all made. */
  const measure = async (drained: boolean): Promise<Measured> => {
    const before = cpuUs();
    const r = await load(base, requests, DURATION);
    if (drained) while ((await pending()) > 0) await sleep(20);
    const cpu = (cpuUs() - before) / r.requests;
    return { cpu, rps: Math.round(r.rps), failed: r.non2xx + r.errors };
  };
  const drain = async () => {
    worker.start();
    while ((await pending()) > 0) await sleep(20);
  };

  console.log(`webhooks bench on ${results.database}, Node ${process.version}, ${CONNECTIONS} connections, ${DURATION} s x ${ROUNDS} rounds`);
  await setEndpoint(false);
  await load(base, requests, 1); // warm-up
  const off: Measured[] = [];
  const emitting: Measured[] = [];
  const delivering: Measured[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    await setEndpoint(false);
    off.push(await measure(false));
    await setEndpoint(true);
    await worker.stop(10_000);
    emitting.push(await measure(false));
    await drain();
    delivering.push(await measure(true));
  }
  await setEndpoint(false);
  const cpuOf = (ms: Measured[]) => median(ms.map((m) => m.cpu));
  const summary = (ms: Measured[]) => ({
    'cpu-us-per-request': Math.round(cpuOf(ms)),
    rps: median(ms.map((m) => m.rps)),
    failed: ms.reduce((n, m) => n + m.failed, 0),
    'cpu-per-round': ms.map((m) => Math.round(m.cpu)),
  });
  const extra = (ms: Measured[]) => +((cpuOf(ms) / cpuOf(off) - 1) * 100).toFixed(1);
  results['role-change'] = {
    'no-endpoint': summary(off),
    emitting: summary(emitting),
    'emitting-and-delivering': summary(delivering),
    'emitting-extra-cpu-percent': extra(emitting),
    'emitting-target-met': extra(emitting) <= 10,
    'emitting-and-delivering-extra-cpu-percent': extra(delivering),
  };
  const line = (label: string, ms: Measured[]) =>
    console.log(
      `  ${label.padEnd(38)} ${String(Math.round(cpuOf(ms))).padStart(6)} µs CPU/request, ${median(ms.map((m) => m.rps))} req/s (rounds: ${ms.map((m) => Math.round(m.cpu)).join(' ')})`,
    );
  line('role change, no live endpoint:', off);
  line('role change, emitting:', emitting);
  line('role change, emitting and delivering:', delivering);
  console.log(
    `  extra CPU per request: emitting ${extra(emitting)} % (target <= 10 %: ${extra(emitting) <= 10 ? 'met' : 'NOT met'}); emitting and delivering ${extra(delivering)} %`,
  );

  // 2. deliveries per second
  await setEndpoint(true);
  const started = performance.now();
  const cpuStart = cpuUs();
  await system.database.db.transaction().execute(async (trx) => {
    for (let i = 0; i < DELIVERIES; i++) await emitWebhookEvent(trx, org.id, 'member.updated', { member: { 'account-id': member.id, role: 'member', n: i } });
  });
  const committed = performance.now();
  while ((await pending()) > 0) await sleep(10);
  const seconds = (performance.now() - committed) / 1000;
  const failed = Number(
    (
      await system.database.db
        .selectFrom('webhook_delivery')
        .where('status', '!=', 'succeeded')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
  results.deliveries = {
    count: DELIVERIES,
    'per-second': Math.round(DELIVERIES / seconds),
    'cpu-us-per-delivery': Math.round((cpuUs() - cpuStart) / DELIVERIES),
    'enqueue-ms': Math.round(committed - started),
    'not-succeeded': failed,
  };
  console.log(`  deliveries: ${DELIVERIES} in ${seconds.toFixed(2)} s = ${Math.round(DELIVERIES / seconds)}/s from one instance (${failed} not succeeded)`);
  console.log(JSON.stringify(results));
} finally {
  await system.stop();
  receiver.stop();
  await db.drop();
  await rm(dir, { recursive: true, force: true });
}

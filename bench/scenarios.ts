/**
 * What is requested of each compared system, and the status every answer must have.
 *
 *  - every server: `GET /api/health` (the peers answer the same body)
 *  - the project, besides: the answers a public server gives most (an unknown path: scanners send
 *    mostly those; a 401 without a token; a 400 from validation) and the account reads
 *    (`GET /api/account/me`, the query endpoint's `account/me`, the MCP server's tool call
 *    `get-account`, which runs the same route in-process), in JSON; the full run adds Transit,
 *    and log-in (argon2id) with health's latency while log-ins run flat out
 */
import type { Format } from '../src/shared/codecs.js';
import { mcpToken } from './mcp-token.js';
import type { Kind, Running } from './servers.js';

const compiled = <T>(path: string): Promise<T> => import(new URL(`../dist/${path}`, import.meta.url).href) as Promise<T>;
const { json, transitJson } = await compiled<typeof import('../src/shared/codecs.js')>('shared/codecs.js');

export interface Scenario {
  key: string;
  label: string;
  path: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** the status every answer must have */
  status: number;
}

export const health: Scenario = { key: 'health', label: 'GET /api/health', path: '/api/health', status: 200 };

/** the error answers, each judged against health: an unknown path, no token, a body that fails validation */
export const notFound: Scenario = { key: 'not-found', label: 'GET /no-such (404)', path: '/no-such', status: 404 };
export const noToken: Scenario = { key: 'no-token', label: 'GET /me without a token (401)', path: '/api/account/me', status: 401 };
export const invalidBody: Scenario = {
  key: 'invalid-body',
  label: 'POST /log-in, invalid body (400)',
  path: '/api/account/log-in',
  method: 'POST',
  headers: { 'content-type': json.mime },
  body: JSON.stringify({ email: 'not an address' }),
  status: 400,
};
/** the same 400 for a Spanish reader: its message and each field's reason translated (docs/i18n.md) */
export const invalidBodySpanish: Scenario = {
  ...invalidBody,
  key: 'invalid-body-es',
  label: 'POST /log-in, invalid body, in Spanish (400)',
  headers: { ...invalidBody.headers, 'accept-language': 'es-ES,es;q=0.9' },
};

export interface Account {
  email: string;
  password: string;
  token: string;
}

/** Signs an account up on the project and logs it in. */
async function account(server: Running): Promise<Account> {
  const email = `bench-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`;
  const password = 'bench password 123';
  const post = (path: string) =>
    fetch(`${server.url}/api/account/${path}`, { method: 'POST', headers: { 'content-type': json.mime }, body: JSON.stringify({ email, password }) });
  const signUp = await post('sign-up');
  if (signUp.status !== 201) throw new Error(`bench: sign-up answered ${signUp.status}: ${await signUp.text()}`);
  const logIn = await post('log-in');
  if (logIn.status !== 200) throw new Error(`bench: log-in answered ${logIn.status}: ${await logIn.text()}`);
  return { email, password, token: ((await logIn.json()) as { 'access-token': string })['access-token'] };
}

function reads(token: string, format: Format): Scenario[] {
  const headers = { authorization: `Bearer ${token}`, accept: format.mime };
  return [
    { key: `me-${format.name}`, label: `GET /me (${format.name})`, path: '/api/account/me', headers, status: 200 },
    {
      key: `query-${format.name}`,
      label: `query account/me (${format.name})`,
      path: '/api/cqrs/query',
      method: 'POST',
      headers: { ...headers, 'content-type': format.mime },
      body: format.encode({ 'query/kind': 'account/me' }),
      status: 200,
    },
  ];
}

const GET_ACCOUNT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get-account', arguments: {} } });

/**
 * `tools/call get-account` on `/mcp` with an OAuth token issued for it: one stateless request, as
 * an assistant sends it (no `initialize` first: any instance answers any call). Its answer is
 * checked once to be the account, not a tool error, which is a 200 too.
 */
async function mcpGetAccount(server: Running, acc: Account): Promise<Scenario> {
  const token = await mcpToken(server.url, acc.token, 'account:read');
  const scenario: Scenario = {
    key: 'mcp-get-account',
    label: 'MCP tools/call get-account',
    path: '/mcp',
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    },
    body: GET_ACCOUNT,
    status: 200,
  };
  const res = await fetch(`${server.url}/mcp`, { method: 'POST', headers: scenario.headers, body: scenario.body });
  const answer = (await res.json()) as { result?: { isError?: boolean; structuredContent?: { email?: string } } };
  if (answer.result?.isError || answer.result?.structuredContent?.email !== acc.email)
    throw new Error(`bench: ${scenario.label} did not answer the account: ${JSON.stringify(answer).slice(0, 200)}`);
  return scenario;
}

/** The scenarios of one server (and, for the project, the account they use), each checked once before any load. */
export async function scenariosFor(server: Running, kind: Kind, full: boolean): Promise<{ scenarios: Scenario[]; account?: Account }> {
  if (kind === 'peer-validating') return { scenarios: await checked(server, [health, invalidBody]) };
  if (kind !== 'project') return { scenarios: await checked(server, [health]) };
  const acc = await account(server);
  const scenarios = [
    health,
    notFound,
    noToken,
    invalidBody,
    invalidBodySpanish,
    ...reads(acc.token, json),
    await mcpGetAccount(server, acc),
    ...(full ? reads(acc.token, transitJson) : []),
  ];
  return { scenarios: await checked(server, scenarios), account: acc };
}

/** Every scenario answered once with its status: a bench of the wrong answer measures nothing. */
async function checked(server: Running, scenarios: Scenario[]): Promise<Scenario[]> {
  for (const s of scenarios) {
    const res = await fetch(`${server.url}${s.path}`, { method: s.method ?? 'GET', headers: s.headers, body: s.body });
    const text = await res.text();
    if (res.status !== s.status) throw new Error(`bench: ${s.label} answered ${res.status}, not ${s.status}: ${text.slice(0, 200)}`);
  }
  return scenarios;
}

/** Log-in in each format (argon2id: CPU-bound by design), measured once per project server (full run). */
export function logIns(acc: Account): Scenario[] {
  return [json, transitJson].map((format) => ({
    key: `log-in-${format.name}`,
    label: `POST /log-in (${format.name})`,
    path: '/api/account/log-in',
    method: 'POST',
    headers: { accept: format.mime, 'content-type': format.mime },
    body: format.encode({ email: acc.email, password: acc.password }),
    status: 200,
  }));
}

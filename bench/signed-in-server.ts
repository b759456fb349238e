/**
 * The compiled server as `npm start` runs it on a PGlite directory of its own (the disk store
 * beside it, nothing else configured), with one person signed up and logged in: what the memory
 * benches (upload.ts, streams.ts) measure against.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { type Running, startServer } from './servers.js';

export interface SignedInServer {
  server: Running;
  /** the person's access token */
  token: string;
  stop(): Promise<void>;
}

/** A JSON answer, or the bench stops naming what refused. */
export async function json(res: Response): Promise<Record<string, unknown>> {
  const body = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`bench: ${res.url} answered ${res.status} ${JSON.stringify(body)}`);
  return body;
}

export async function signedInServer(tmp: string, name: string, env: Record<string, string>, script = 'dist/server.js'): Promise<SignedInServer> {
  const dir = await mkdtemp(join(tmp, `${name}-`));
  const server = await startServer(script, {
    env: {
      APP_ENV: 'dev',
      DATABASE_URL: '',
      MAIL_URL: '',
      PGLITE_DIR: join(dir, 'pglite'),
      STORAGE_DIR: join(dir, 'files'),
      LOG_CONSOLE: 'off',
      SIGNUP_LIMIT_ADDRESS: '0',
      ...env,
    },
  });
  const stop = async () => {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const credentials = JSON.stringify({ email: `${name}@example.com`, password: `${name} password 123` });
    const headers = { 'content-type': 'application/json', accept: 'application/json' };
    await json(await fetch(`${server.url}/api/account/sign-up`, { method: 'POST', headers, body: credentials }));
    const logIn = await json(await fetch(`${server.url}/api/account/log-in`, { method: 'POST', headers, body: credentials }));
    return { server, token: String(logIn['access-token']), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

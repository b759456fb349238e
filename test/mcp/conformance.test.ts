/**
 * The generic server scenarios of the official conformance suite (`@modelcontextprotocol/conformance`,
 * run with the project's own Node: it needs 22 or later) against the running server: initialize,
 * ping, tools-list and DNS-rebinding protection. The suite has no way to send a credential, and
 * every method of `/mcp` needs one, so it talks to a small proxy on 127.0.0.1 that adds the person's
 * token to each request and forwards it as it came (its Origin included).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { account, createOrg } from '../orgs/support.js';
import { freePort } from '../support/net.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { mcpApp, mcpToken } from './support.js';

const CLI = fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/conformance/dist/index.js', import.meta.url));
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];

/** Forwards every request to `target` with `authorization` added. */
async function authorizingProxy(port: number, target: URL, authorization: string): Promise<Server> {
  const server = createServer((req, res) => {
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: target.pathname,
        headers: { ...req.headers, host: target.host, authorization },
        // a connection of its own per request, closed after it: none is left open for the server's stop to wait on
        agent: false,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
}

/**
 * One scenario of the suite, killed after a minute. It ends when the suite's process exits, not
 * when its output closes: a process it left behind holding the pipe must not hold the test.
 */
function runSuite(url: string, scenario: string, dir: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, 'server', '--url', url, '--scenario', scenario, '-o', dir], {
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    const killer = setTimeout(() => {
      stderr += '\n(killed after 60 s)';
      child.kill('SIGKILL');
    }, 60_000);
    child.on('exit', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('the MCP conformance suite’s server scenarios (pglite)', { timeout: 5 * 60_000 }, () => {
  let t: TestSystem;
  let proxy: Server;
  let proxyUrl: string;
  let output: string;

  before(
    async () => {
      const port = await freePort();
      const proxyPort = await freePort();
      proxyUrl = `http://127.0.0.1:${proxyPort}/mcp`;
      // the suite sends the proxy's own origin as a valid one
      t = await startSystem(testDatabases()[0], { PORT: String(port), APP_URL: `http://127.0.0.1:${port}`, ALLOWED_ORIGINS: `http://127.0.0.1:${proxyPort}` });
      const owner = await account(t);
      const orgId = await createOrg(t, owner, 'Acme');
      const config = await mcpApp(t, owner.token, orgId, ['account:read', 'orgs:read']);
      const token = await mcpToken(t, config, owner.token, 'account:read orgs:read');
      proxy = await authorizingProxy(proxyPort, new URL(`${t.url}/mcp`), `Bearer ${token}`);
      output = await mkdtemp(join(tmpdir(), 'mcp-conformance-'));
      // a step that hangs fails here with its name, not as a file killed after ten minutes
    },
    { timeout: 2 * 60_000 },
  );
  after(
    async () => {
      proxy?.closeAllConnections();
      proxy?.close();
      await t?.stop();
      if (output) await rm(output, { recursive: true, force: true });
    },
    { timeout: 60_000 },
  );

  for (const scenario of SCENARIOS)
    it(`passes ${scenario}`, { timeout: 90_000 }, async () => {
      const dir = join(output, scenario);
      const run = await runSuite(proxyUrl, scenario, dir);
      const files = await readdir(dir, { recursive: true });
      const checksFile = files.find((f) => String(f).endsWith('checks.json'));
      assert.ok(checksFile, `no checks.json: ${run.stdout}\n${run.stderr}`);
      const checks = JSON.parse(await readFile(join(dir, String(checksFile)), 'utf8')) as Array<{ id: string; status: string; errorMessage?: string }>;
      assert.ok(checks.length > 0);
      const failed = checks.filter((c) => c.status !== 'SUCCESS' && c.status !== 'INFO');
      assert.deepEqual(failed, [], run.stdout);
      assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    });
});

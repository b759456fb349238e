/**
 * A SIGTERM to `npm start` (what a process supervisor sends to the process it started) reaches
 * the server: the script's shell hands its place to node (`exec`), so npm's forwarded signal is
 * the server's, which stops; without it the shell died and the server kept running as an orphan,
 * holding its port and the PGlite directory. Run on package.json's own start script, with the
 * build left out and a stand-in for the server that reports the signal.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('npm start', () => {
  const dir = mkdtempSync(join(tmpdir(), 'start-signal-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('passes a SIGTERM on to the server, which stops; npm then exits 0', { timeout: 60_000 }, async () => {
    const start = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start;
    assert.match(start, /^npm run build && /);
    const script = start.replace('npm run build', 'true').replace('dist/server.js', 'server.mjs');
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'start-signal', private: true, scripts: { start: script } }));
    writeFileSync(
      join(dir, 'server.mjs'),
      "process.on('SIGTERM', () => { console.log('stopping'); process.exit(0); });\nconsole.log('ready ' + process.pid);\nsetInterval(() => {}, 1000);\n",
    );
    const npm = spawn('npm', ['start', '--silent'], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
    const lines = createInterface({ input: npm.stdout });
    let serverPid = 0;
    let stopping = false;
    const ready = new Promise<void>((resolve) =>
      lines.on('line', (line) => {
        const m = /^ready (\d+)$/.exec(line);
        if (m) {
          serverPid = Number(m[1]);
          resolve();
        }
        if (line === 'stopping') stopping = true;
      }),
    );
    try {
      await ready;
      assert.notEqual(serverPid, npm.pid, 'npm runs the script in a process of its own');
      npm.kill('SIGTERM');
      assert.equal(await exited, 0);
      for (let i = 0; i < 50 && alive(serverPid); i++) await sleep(100);
      assert.equal(alive(serverPid), false, 'the server stopped');
      assert.ok(stopping, 'the server heard the SIGTERM');
    } finally {
      if (serverPid && alive(serverPid)) process.kill(serverPid, 'SIGKILL');
      npm.kill('SIGKILL');
    }
  });
});

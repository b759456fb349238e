/**
 * Runs the test files, several at a time, each in its own `node --test` process.
 *
 * Why not `node --test --test-concurrency=N` alone: a few files measure time (known against
 * unknown addresses by median ratio) or load the machine on purpose (SIGTERM under load, a
 * cluster of workers), and another file running beside them would make them flaky. Such a file
 * says so in its first lines with a `// test-run: alone` comment; it runs with nothing else in
 * flight. Every other file runs in a pool of TEST_CONCURRENCY processes (default: the cores).
 * Each test system has its own PostgreSQL database and PGlite is in memory, so files share
 * nothing but Redis, where their keys carry random emails and ids.
 *
 * Usage: node scripts/run-tests.mjs [file or glob ...]   (default: test/*\/*.test.ts)
 * A file's output is printed whole when it fails (or with TEST_VERBOSE=1), otherwise one line.
 */
import { spawn } from 'node:child_process';
import { globSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

const patterns = process.argv.slice(2);
const files = [...new Set((patterns.length ? patterns : ['test/*/*.test.ts']).flatMap((p) => globSync(p)))].sort();
if (files.length === 0) {
  console.error(`no test files match ${patterns.join(' ')}`);
  process.exit(2);
}
const concurrency = Math.max(1, Number(process.env.TEST_CONCURRENCY) || availableParallelism());
const verbose = process.env.TEST_VERBOSE === '1';
// a file that hangs is killed rather than holding CI until its own limit
const fileTimeoutMs = Number(process.env.TEST_FILE_TIMEOUT_MS) || 10 * 60_000;

// each file read once: whether it runs alone, and how long it takes. Longest first packs the pool
// best: a file's seconds in the last measured run (scripts/test-durations.json, refreshed with
// TEST_DURATIONS_OUT=<file>), else its size as a stand-in (a byte is about a millisecond)
const sources = new Map(files.map((file) => [file, readFileSync(file, 'utf8')]));
const alone = (file) => /^\/\/ test-run: alone\b/m.test(sources.get(file).slice(0, 2000));
const measured = JSON.parse(readFileSync(new URL('./test-durations.json', import.meta.url), 'utf8'));
const expected = (file) => measured[file] ?? sources.get(file).length / 1000;
const serialFiles = files.filter(alone);
const pooledFiles = files.filter((f) => !alone(f)).sort((a, b) => expected(b) - expected(a));

const totals = { tests: 0, pass: 0, fail: 0, skipped: 0, cancelled: 0, todo: 0 };
const timings = [];
const failedFiles = [];
const lingeringFiles = [];
/** seconds between a file's last test and its process's end past which it is named */
const LINGER_NOTICE_S = 5;

function runFile(file) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', file], {
      env: { ...process.env, FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    // when the file's last test ended: a file whose process lives on long after it (a timer or
    // a socket left open) costs CI that time for nothing, and is named at the end
    let lastResultAt = started;
    child.stdout.on('data', (chunk) => {
      output += chunk;
      if (/^\s*[✔✖] /m.test(String(chunk))) lastResultAt = Date.now();
    });
    child.stderr.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => {
      output += `\n[run-tests] ${file} still running after ${fileTimeoutMs / 1000} s: killed\n`;
      child.kill('SIGKILL');
    }, fileTimeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const seconds = (Date.now() - started) / 1000;
      const counts = {};
      for (const key of Object.keys(totals)) {
        const match = output.match(new RegExp(`^ℹ ${key} (\\d+)$`, 'm'));
        counts[key] = match ? Number(match[1]) : 0;
        totals[key] += counts[key];
      }
      const failed = code !== 0 || counts.fail > 0 || counts.tests === 0;
      timings.push({ file, seconds });
      const lingered = (Date.now() - lastResultAt) / 1000;
      if (lingered > LINGER_NOTICE_S) lingeringFiles.push(`${file} ${lingered.toFixed(0)} s`);
      if (failed) failedFiles.push(file);
      const line =
        `${failed ? '✖' : '✔'} ${file} — ${counts.pass}/${counts.tests} passed` +
        `${counts.skipped ? `, ${counts.skipped} skipped` : ''}${counts.fail ? `, ${counts.fail} failed` : ''}` +
        `${signal ? `, ended by ${signal}` : ''} (${seconds.toFixed(1)} s)`;
      if (failed || verbose) process.stdout.write(`\n${output}\n`);
      console.log(line);
      resolve();
    });
  });
}

async function runPool(list, width) {
  const queue = [...list];
  const worker = async () => {
    while (queue.length > 0) await runFile(queue.shift());
  };
  await Promise.all(Array.from({ length: Math.min(width, list.length) }, worker));
}

const started = Date.now();
console.log(`${files.length} test files: ${pooledFiles.length} ${concurrency} at a time, then ${serialFiles.length} alone`);
await runPool(pooledFiles, concurrency);
await runPool(serialFiles, 1);

if (process.env.TEST_DURATIONS_OUT) {
  const rounded = Object.fromEntries([...timings].sort((a, b) => a.file.localeCompare(b.file)).map((t) => [t.file, Math.round(t.seconds)]));
  writeFileSync(process.env.TEST_DURATIONS_OUT, `${JSON.stringify(rounded, null, 2)}\n`);
}
const slowest = [...timings].sort((a, b) => b.seconds - a.seconds).slice(0, 8);
console.log(`\nslowest files: ${slowest.map((t) => `${t.file} ${t.seconds.toFixed(0)} s`).join(', ')}`);
console.log(
  `tests ${totals.tests}, pass ${totals.pass}, fail ${totals.fail}, skipped ${totals.skipped}, ` +
    `cancelled ${totals.cancelled}, todo ${totals.todo}; ${files.length} files in ${((Date.now() - started) / 1000).toFixed(0)} s`,
);
if (lingeringFiles.length > 0) {
  console.log(`files whose process outlived their last test by over ${LINGER_NOTICE_S} s (a timer or handle left open): ${lingeringFiles.join(', ')}`);
}
if (failedFiles.length > 0) {
  console.log(`failed files:\n${failedFiles.map((f) => `  ${f}`).join('\n')}`);
  process.exit(1);
}

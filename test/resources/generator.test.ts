/**
 * `npm run new:resource` and `npm run remove:resource` (docs/resources.md) in a copy of the
 * repository: every refusal leaves the tree as it was; a resource with every field type (a file
 * and an optional image among them) passes the project's own checks (type-check, module rules,
 * lint) and its generated tests on PGlite and PostgreSQL, its five MCP tools called through the
 * official SDK client and its files on the disk store and on S3 (`s3rver`) among them; its page
 * works in Chromium, uploads included, and is axe-clean; removing it leaves the tree as before but
 * for the migrations.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { browserHarness } from '../support/browser.js';
import { startChildServer, type ChildServer } from '../support/child-server.js';
import { TIME_ENTRIES_PAGE_PROVOKES, useTimeEntriesPage } from './time-entries-page.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const SPEC = [
  'time-entry',
  'title:string',
  'notes:text?',
  'hours:integer',
  'rate:decimal:optional',
  'billable:boolean',
  'day:date',
  'starts-at:datetime?',
  'status:enum:draft|submitted|approved',
  'attachment:file',
  'receipt:image?',
];
/** no decimal (nor any type but two), every field but one optional, members write: a narrower resource's code passes the same checks */
const NARROW = ['task', 'title:string', 'done:boolean?', '--write-role', 'member'];

/** A digest of every file of the tree (node_modules and build output aside), by path. */
function tree(dir: string, skip: (path: string) => boolean = () => false): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      const rel = relative(dir, path);
      if (['node_modules', 'public', 'dist', 'test-artifacts', '.git'].includes(rel) || skip(rel)) continue;
      if (entry.isDirectory()) walk(path);
      else files.set(rel, createHash('sha256').update(readFileSync(path)).digest('hex'));
    }
  };
  walk(dir);
  return files;
}

const changedPaths = (a: Map<string, string>, b: Map<string, string>) => [...new Set([...a.keys(), ...b.keys()])].filter((k) => a.get(k) !== b.get(k)).sort();

describe('the resource generator', () => {
  let dir: string;
  let original: Map<string, string>;
  const browser = browserHarness('generator');
  let server: ChildServer | undefined;
  let filesDir: string | undefined;

  /** runs an npm script of the copy; its exit status and output */
  const npm = (script: string, args: string[] = []) => {
    const result = spawnSync('npm', ['run', '-s', script, '--', ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, FORCE_COLOR: '0' } });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  };
  const must = (command: string, args: string[]) => {
    // the copy's own test runs are not this file's subtests
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    // its PostgreSQL template (other migrations) is named apart from this run's (test/support/migrated.ts)
    const result = spawnSync(command, args, { cwd: dir, encoding: 'utf8', env: { ...env, FORCE_COLOR: '0', TEST_TEMPLATE_PREFIX: 't_gen' } });
    assert.equal(result.status, 0, `${command} ${args.join(' ')}:\n${result.stdout.slice(-4000)}\n${result.stderr.slice(-4000)}`);
    return result.stdout;
  };

  /** `must`, without blocking: several checks run side by side */
  const mustAsync = (command: string, args: string[]) =>
    new Promise<string>((resolve, reject) => {
      const { NODE_TEST_CONTEXT: _, ...env } = process.env;
      const child = spawn(command, args, { cwd: dir, env: { ...env, FORCE_COLOR: '0', TEST_TEMPLATE_PREFIX: 't_gen' } });
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (err += d));
      child.on('error', reject);
      child.on('close', (status) => {
        if (status === 0) resolve(out);
        else
          reject(
            new assert.AssertionError({ message: `${command} ${args.join(' ')}:\n${out.slice(-4000)}\n${err.slice(-4000)}`, actual: status, expected: 0 }),
          );
      });
    });

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'saas-generator-'));
    // the repository as a clone has it: tracked files and new ones not ignored
    const listed = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: REPO, encoding: 'utf8' }).split('\0').filter(Boolean);
    for (const file of listed) {
      // (a worktree's node_modules may be a symlink, listed as a file)
      if (!existsSync(join(REPO, file)) || file === 'node_modules') continue;
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      cpSync(join(REPO, file), join(dir, file));
    }
    symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'));
    original = tree(dir);
  });
  after(async () => {
    await browser.close();
    await server?.dispose();
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (filesDir) rmSync(filesDir, { recursive: true, force: true });
  });

  it('refuses a bad name, a bad field, a name in use or a file it would overwrite, in one line, writing nothing', () => {
    writeFileSync(join(dir, 'docs/gadgets.md'), 'mine\n');
    const before = tree(dir);
    const refusals: Array<[string[], RegExp]> = [
      [['Gadget', 'name:string'], /kebab-case/],
      [['webhook', 'name:string'], /reserved/],
      [['select', 'name:string'], /reserved/],
      [['gadget', 'name:strin'], /unknown type "strin"/],
      [['gadget', 'id:string'], /reserved/],
      [['gadget', 'Name:string'], /kebab-case/],
      [['gadget', 'name:string', 'name:text'], /given twice/],
      [['gadget', 'status:enum'], /needs values/],
      [['gadget', 'status:enum:a|b|a'], /"a" is given twice/],
      [['gadget'], /at least one field/],
      [['gadget', 'name:string', '--write-role', 'boss'], /--write-role/],
      [['invitation', 'name:string'], /reserved/],
      [['gadget', 'name:string'], /docs\/gadgets\.md/],
      // names the running system's registries hold: its schema `subscription` (billing), an audit action
      [['subscription', 'plan:string'], /OpenAPI schema "subscription"/],
    ];
    for (const [args, why] of refusals) {
      const run = npm('new:resource', args);
      assert.equal(run.status, 1, `${args.join(' ')}: ${run.stdout}${run.stderr}`);
      const lines = run.stderr.trim().split('\n');
      assert.equal(lines.length, 1, `one line for ${args.join(' ')}: ${run.stderr}`);
      assert.match(lines[0], why);
      assert.doesNotMatch(run.stderr, /at .*\.ts:\d+/, 'no stack trace');
    }
    assert.deepEqual(changedPaths(before, tree(dir)), [], 'nothing written');
    rmSync(join(dir, 'docs/gadgets.md'));
  });

  it('prints what a dry run would write and writes nothing', () => {
    const run = npm('new:resource', [...SPEC, '--dry-run']);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /new {4}\s*src\/time-entries\/module\.ts/);
    assert.match(run.stdout, /changed\s+src\/system\.ts/);
    assert.deepEqual(changedPaths(original, tree(dir)), []);
  });

  it('writes a resource of every field type, and one without a decimal, that pass type-check, module rules, lint and their own tests on PGlite and PostgreSQL', async () => {
    const narrow = npm('new:resource', NARROW);
    assert.equal(narrow.status, 0, narrow.stderr);
    const run = npm('new:resource', SPEC);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /node scripts\/run-tests\.mjs 'test\/time-entries\/\*\.test\.ts'/);
    const written = changedPaths(original, tree(dir));
    for (const path of [
      'src/time-entries/module.ts',
      'src/client/time-entries/feature.ts',
      'test/time-entries/http.test.ts',
      'test/time-entries/mcp.test.ts',
      'docs/time-entries.md',
      'src/system.ts',
    ])
      assert.ok(written.includes(path), path);
    assert.ok(
      written.every((p) => run.stdout.includes(p) || narrow.stdout.includes(p)),
      'every file it wrote is printed',
    );
    assert.ok(
      !written.some((p) => /^src\/(webhooks|audit|api-keys|orgs|http|db\/database|config)/.test(p)),
      `no other feature or base layer changes: ${written.join(', ')}`,
    );
    // its five routes are five MCP tools (mcp.test.ts lists and calls them)
    const routes = readFileSync(join(dir, 'src/time-entries/routes.ts'), 'utf8');
    for (const tool of ['list-time-entries', 'get-time-entry', 'create-time-entry', 'update-time-entry', 'delete-time-entry'])
      assert.equal(routes.split(`name: '${tool}',`).length - 1, 1, tool);
    // the client's and the scripts' configurations: the latter holds the server's sources and the tests
    // at once: each check is one process that waits on nothing of the others'
    // (its words in every catalog, English until translated: i18n:status)
    await Promise.all([
      mustAsync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.client.json']),
      mustAsync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.scripts.json']),
      mustAsync('npm', ['run', '-s', 'lint:modules']),
      mustAsync('npm', ['run', '-s', 'lint']),
      mustAsync('npm', ['run', '-s', 'i18n:status']),
    ]);
    for (const locale of ['de', 'es', 'ar']) {
      const catalog = JSON.parse(readFileSync(join(dir, `src/client/time-entries/messages/${locale}.json`), 'utf8')) as Record<string, string>;
      for (const id of ['Time entries', 'Time entry', 'Starts at', 'Approved']) assert.equal(catalog[id], id, `${locale}: ${id}`);
    }
    const tests = must(process.execPath, ['scripts/run-tests.mjs', 'test/time-entries/*.test.ts', 'test/tasks/*.test.ts']);
    assert.match(tests, /fail 0/);
    assert.match(tests, /7 files/, 'both resources ran their tests');
    for (const plural of ['time-entries', 'tasks']) assert.match(tests, new RegExp(`✔ test/${plural}/mcp\\.test\\.ts — 3/3 passed`), `${plural}' MCP tools`);
    // its file fields on both stores; a resource without one has no such test, nor its docs' section
    assert.match(tests, /✔ test\/time-entries\/files\.test\.ts — 10\/10 passed/);
    assert.equal(existsSync(join(dir, 'test/tasks/files.test.ts')), false);
    assert.match(readFileSync(join(dir, 'docs/time-entries.md'), 'utf8'), /^## Its files$/m);
    assert.doesNotMatch(readFileSync(join(dir, 'docs/tasks.md'), 'utf8'), /Its files|file fields -->/);
  });

  browser.step(
    'its page lists, creates (its files uploaded), edits and deletes in Chromium, axe-clean',
    async () => {
      must(process.execPath, ['scripts/build-client.mjs']);
      // its files outside the copy, whose tree the removal compares
      filesDir = mkdtempSync(join(tmpdir(), 'saas-generator-files-'));
      server = await startChildServer({ cwd: dir, env: { PUBLIC_DIR: join(dir, 'public'), STORAGE_DIR: filesDir } });
      const base = `http://127.0.0.1:${server.port}`;
      const email = `owner-${Date.now()}@example.test`;
      const password = 'correct horse battery staple';
      const signUp = await fetch(`${base}/api/account/sign-up`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password }),
      });
      assert.equal(signUp.status, 201);
      const logIn = await fetch(`${base}/api/account/log-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password }),
      });
      const token = ((await logIn.json()) as { 'access-token': string })['access-token'];
      await browser.launch();
      const page: Page = await browser.openPage('owner');
      await page.goto(`${base}/log-in`);
      await page.getByLabel('Email', { exact: true }).fill(email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.waitForURL(`${base}/account`);
      await page.locator('#nav-orgs').click();
      await page.locator('#org-list a').first().click();
      await page.waitForURL(/\/orgs\/[0-9a-f-]{36}$/);
      const orgId = new URL(page.url()).pathname.split('/')[2];
      await useTimeEntriesPage(page, { base, orgId, token });
    },
    TIME_ENTRIES_PAGE_PROVOKES,
  );

  it('removes it all but its migration; with --drop-table, a migration drops the table', () => {
    // what a build compiled of it goes too
    mkdirSync(join(dir, 'dist/time-entries'), { recursive: true });
    writeFileSync(join(dir, 'dist/time-entries/module.js'), 'export {};\n');
    assert.equal(npm('remove:resource', ['task']).status, 0);
    const run = npm('remove:resource', ['time-entry']);
    assert.equal(run.status, 0, run.stderr);
    assert.equal(existsSync(join(dir, 'dist/time-entries')), false, 'its compiled files are gone');
    const isMigration = (p: string) => p.startsWith('src/db/migrations/') || p === 'src/db/migrate.ts';
    const left = changedPaths(original, tree(dir));
    assert.deepEqual(
      left.filter((p) => !isMigration(p)),
      [],
      'only migrations differ',
    );
    // (the tree is the type-checked one but for the migration, which was type-checked with the resource)
    assert.deepEqual(left, ['src/db/migrate.ts', ...left.filter((p) => p.startsWith('src/db/migrations/'))]);

    // --limit and --feature: route data on the write routes
    assert.equal(npm('new:resource', ['gadget', 'name:string', '--limit', 'api-calls', '--feature', 'reports']).status, 0);
    const routes = readFileSync(join(dir, 'src/gadgets/routes.ts'), 'utf8');
    assert.equal(routes.match(/limit: 'api-calls',/g)?.length, 3, 'POST, PATCH and DELETE');
    assert.equal(routes.match(/requires: \{ feature: 'reports' \},/g)?.length, 3);
    const dropped = npm('remove:resource', ['gadget', '--drop-table']);
    assert.equal(dropped.status, 0, dropped.stderr);
    const drop = readdirSync(join(dir, 'src/db/migrations')).find((f) => /_drop_gadgets\.ts$/.test(f));
    assert.ok(drop, 'a migration that drops the table');
    assert.match(readFileSync(join(dir, 'src/db/migrations', drop), 'utf8'), /dropTable\('gadget'\)/);
    assert.ok(readFileSync(join(dir, 'src/db/migrate.ts'), 'utf8').includes(drop.replace('.ts', '')));
    assert.equal(npm('remove:resource', ['gadget']).status, 1, 'gone already');
  });
});

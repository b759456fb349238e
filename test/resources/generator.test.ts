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
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { transitJson } from '../../src/shared/codecs.js';
import { axeViolations, browserHarness } from '../support/browser.js';
import { startChildServer, type ChildServer } from '../support/child-server.js';
import { withoutLinks } from '../support/resources.js';

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

  it('writes a resource of every field type, and one without a decimal, that pass type-check, module rules, lint and their own tests on PGlite and PostgreSQL', () => {
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
    must(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.client.json']);
    must(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.scripts.json']);
    must('npm', ['run', '-s', 'lint:modules']);
    must('npm', ['run', '-s', 'lint']);
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

  browser.step('its page lists, creates (its files uploaded), edits and deletes in Chromium, axe-clean', async () => {
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
    await page.locator('#nav-org-time-entries').click();
    await page.waitForURL(`${base}/orgs/${orgId}/time-entries`);
    await page.locator('#no-time-entries').waitFor();
    assert.match((await page.title()) ?? '', /Time entries/);
    assert.deepEqual(await axeViolations(page), [], 'axe-core on the empty list');

    await page.locator('#new-time-entry').click();
    await page.getByLabel('Title', { exact: true }).fill('Design review');
    await page.getByLabel('Notes', { exact: true }).fill('Agenda\nand minutes');
    await page.getByLabel('Hours', { exact: true }).fill('3');
    await page.getByLabel('Rate', { exact: true }).fill('120.50');
    await page.getByLabel('Billable', { exact: true }).check();
    await page.getByLabel('Day', { exact: true }).fill('2026-02-28');
    await page.getByLabel('Starts at', { exact: true }).fill('2026-02-28T09:30');
    await page.getByLabel('Status', { exact: true }).selectOption('submitted');
    // a file uploads once chosen; the server's refusal stands beside its field (bytes that are not the PNG declared)
    const agenda = Buffer.from('Agenda of the design review\n');
    await page.getByLabel('Attachment', { exact: true }).setInputFiles({ name: 'agenda.txt', mimeType: 'text/plain', buffer: agenda });
    await page.locator('#time-entry-form-attachment-status a', { hasText: 'agenda.txt' }).waitFor();
    await page
      .getByLabel('Receipt', { exact: true })
      .setInputFiles({ name: 'receipt.png', mimeType: 'image/png', buffer: Buffer.from('<html>no image</html>'.padEnd(300)) });
    await page.locator('[data-error-for="receipt"]').waitFor();
    assert.match((await page.locator('[data-error-for="receipt"]').textContent()) ?? '', /not the image\/png declared/);
    assert.equal(await page.getByLabel('Receipt', { exact: true }).getAttribute('aria-invalid'), 'true');
    const receipt = await sharp({ create: { width: 120, height: 90, channels: 3, background: '#36f' } })
      .png()
      .toBuffer();
    await page.getByLabel('Receipt', { exact: true }).setInputFiles({ name: 'receipt.png', mimeType: 'image/png', buffer: receipt });
    await page.locator('#time-entry-form-receipt-status a', { hasText: 'receipt.png' }).waitFor();
    assert.equal(await page.locator('[data-error-for="receipt"]').count(), 0, 'the refusal is gone');
    assert.deepEqual(await axeViolations(page), [], 'axe-core on the form');
    await page.getByRole('button', { name: 'Create time entry' }).click();
    const row = page.locator('#time-entries tr[data-item]');
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', /Design review.*3.*120\.50.*Yes.*2026-02-28.*submitted.*agenda\.txt.*receipt\.png/s);
    // the file's link serves its bytes; the image's thumbnail is its 64 px rendition
    const link = (await row.locator('td[data-field="attachment"] a').getAttribute('href')) ?? '';
    assert.deepEqual(Buffer.from(await (await fetch(link)).arrayBuffer()), agenda);
    const thumbnail = row.locator('td[data-field="receipt"] img');
    await page.waitForFunction((img) => (img as HTMLImageElement).complete, await thumbnail.elementHandle());
    assert.equal(await thumbnail.evaluate((img) => (img as HTMLImageElement).naturalWidth), 64);

    // the edit form starts at the item's values, every input type; a save sends only what changed
    await row.locator('.edit-item').click();
    const starts: Record<string, string | boolean> = {
      Title: 'Design review',
      Notes: 'Agenda\nand minutes',
      Hours: '3',
      Rate: '120.50',
      Billable: true,
      Day: '2026-02-28',
      'Starts at': '2026-02-28T09:30',
      Status: 'submitted',
    };
    for (const [label, value] of Object.entries(starts)) {
      const input = page.getByLabel(label, { exact: true });
      assert.equal(typeof value === 'boolean' ? await input.isChecked() : await input.inputValue(), value, label);
    }
    // a file field shows the file it holds
    assert.match((await page.locator('#time-entry-form-attachment-status').textContent()) ?? '', /agenda\.txt/);
    const stored = async () => {
      const res = await fetch(`${base}/api/orgs/${orgId}/time-entries`, { headers: { authorization: `Bearer ${token}` } });
      const [item] = ((await res.json()) as { 'time-entries': Array<Record<string, unknown>> })['time-entries'];
      return item;
    };
    const before = await stored();
    await page.getByLabel('Title', { exact: true }).fill('Design review, part 1');
    const [patch] = await Promise.all([page.waitForRequest((r) => r.method() === 'PATCH'), page.getByRole('button', { name: 'Save' }).click()]);
    assert.deepEqual(Object.keys(transitJson.decode(patch.postData() ?? '') as Record<string, unknown>), ['title'], 'only the changed field');
    await page.locator('#time-entries td[data-field="title"]', { hasText: 'Design review, part 1' }).waitFor();
    const after = await stored();
    // (a file's links are signed when answered)
    assert.deepEqual(
      { ...withoutLinks(after), title: undefined, 'updated-at': undefined },
      { ...withoutLinks(before), title: undefined, 'updated-at': undefined },
      'every other field kept, its files too',
    );

    // the server's field error beside its field (what the browser's own checks let through)
    await row.locator('.edit-item').click();
    await page.getByLabel('Rate', { exact: true }).fill('twelve');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.locator('[data-error-for="rate"]').waitFor();
    assert.equal(await page.getByLabel('Rate', { exact: true }).getAttribute('aria-invalid'), 'true');
    await page.getByLabel('Rate', { exact: true }).fill('99.90');
    await page.getByLabel('Title', { exact: true }).fill('Design review, part 2');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.locator('#time-entries td[data-field="title"]', { hasText: 'Design review, part 2' }).waitFor();
    assert.deepEqual(await axeViolations(page), [], 'axe-core on the list');

    await row.locator('.delete-item').click();
    await page.locator('dialog[open] .confirm-ok').click();
    await page.locator('#no-time-entries').waitFor();

    // its OAuth scopes are offered to the organization's apps, in their words
    await page.goto(`${base}/orgs/${orgId}/oauth-apps`);
    const scopes = page.locator('#oauth-app-scopes');
    await scopes.waitFor();
    assert.match((await scopes.textContent()) ?? '', /time-entries:write: Create, change and delete your organizations' time entries/);
  }, [
    /response: PATCH \/api\/orgs\/[0-9a-f-]+\/time-entries\/[0-9a-f-]+ 400$/,
    /console: Failed to load resource: the server responded with a status of 400 .*\/time-entries\//,
    // the receipt that is not a PNG, refused at its completion
    /response: POST \/api\/uploads\/[0-9a-f-]+\/complete 400$/,
    /console: Failed to load resource: the server responded with a status of 400 .*\/api\/uploads\/[0-9a-f-]+\/complete/,
  ]);

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

/**
 * The compiled server runs without `--enable-source-maps` (it kept every module's map in memory);
 * a logged stack still names TypeScript lines, from the `.js.map` beside a compiled file.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import ts from 'typescript';
import { LevelFilter, presetRules } from '../../src/logging/filter.js';
import { type LogEntry, LogBackend } from '../../src/logging/logger.js';
import { createRedactor } from '../../src/logging/redact.js';
import { APP_ROOT, originalPosition, sourceStack } from '../../src/logging/source-positions.js';

// types and blank lines make the compiled lines differ from the source's
const SOURCE = `interface Order {
  id: string;
  total: number;
}

type Handler = (order: Order) => number;

export const failing: Handler = (order) => {
  const shipped: number = order.total;
  if (shipped >= 0) throw new Error('the order failed');
  return shipped;
};

failing({ id: 'a', total: 1 });
`;
const THROW_LINE = 10;

const dir = mkdtempSync(join(tmpdir(), 'source-positions-'));
// the logger reads maps only under the app's tree (dist/ when compiled, src/ under tsx): a copy there for its test
const inApp = mkdtempSync(join(APP_ROOT, '.source-positions-test-'));
after(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(inApp, { recursive: true, force: true });
});

/** compiles SOURCE as tsc does for dist/ (a .js and its .js.map) in `where`, runs it without source maps, returns its stack */
function compiledStack(name: string, withMap: boolean, where = dir): { stack: string; js: string; tsPath: string } {
  const tsPath = join(where, `${name}.ts`);
  const js = join(where, `${name}.js`);
  writeFileSync(tsPath, SOURCE);
  const out = ts.transpileModule(SOURCE, {
    fileName: tsPath,
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ES2022, sourceMap: true },
  });
  writeFileSync(js, out.outputText.replace(/\/\/# sourceMappingURL=.*$/m, withMap ? `//# sourceMappingURL=${name}.js.map` : ''));
  if (withMap) writeFileSync(`${js}.map`, out.sourceMapText!);
  const run = spawnSync(process.execPath, [js], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
  const stack = run.stderr.slice(run.stderr.indexOf('Error: the order failed'));
  assert.match(stack, /\.js:\d+:\d+/, 'the child ran without source maps');
  return { stack, js, tsPath };
}

describe('source positions without --enable-source-maps', () => {
  it("turn a compiled file's frames into the TypeScript file, line and column", () => {
    const { stack, js, tsPath } = compiledStack('order', true);
    const jsLine = Number(new RegExp(`${js.replaceAll('.', '\\.')}:(\\d+):`).exec(stack)?.[1]);
    assert.notEqual(jsLine, THROW_LINE, 'the compiled line differs from the source line');
    const mapped = sourceStack(stack, dir);
    assert.match(mapped, new RegExp(`at failing \\(${tsPath.replaceAll('.', '\\.')}:${THROW_LINE}:\\d+\\)`));
    assert.ok(!mapped.includes(`${js}:`), 'no frame of the compiled file is left');
    // node's own frames have no map beside them: they stay as they were
    assert.match(mapped, /node:internal\/modules/);
    assert.deepEqual(originalPosition(`file://${js}`, jsLine, 1, dir)?.file, tsPath);
    // outside the app's tree nothing is read: a logged message may quote any path
    assert.equal(sourceStack(stack), stack);
  });

  it('leave a frame as it is when its file has no map', () => {
    const { stack, js } = compiledStack('unmapped', false);
    assert.equal(sourceStack(stack, dir), stack);
    assert.equal(originalPosition(js, 1, 1, dir), undefined);
  });

  it('rewrite frame lines only: a message quoting a path is left alone, and a long one costs no backtracking', () => {
    const { js } = compiledStack('quoted', true);
    const line = `${js}:3:9`;
    const message = `Error: invalid input syntax for type uuid: "${line}"\n    at failing (${line})`;
    const mapped = sourceStack(message, dir);
    assert.ok(mapped.startsWith(`Error: invalid input syntax for type uuid: "${line}"`), 'the message is as it was');
    assert.ok(!mapped.endsWith(`(${line})`), 'the frame line is mapped');
    // 64 KB of slashes in the message (a pattern run over the whole text backtracked for seconds on
    // it): only lines that start as frames are matched, and a line too long for one is skipped
    const hostile = `Error: ${'/'.repeat(65_536)}.js\n    at ${'/'.repeat(2_000)}x.js:1:1\n    at x (${line})`;
    const [first, long, frame] = sourceStack(hostile, dir).split('\n');
    assert.equal(first, hostile.split('\n')[0]);
    assert.equal(long, hostile.split('\n')[1]);
    assert.doesNotMatch(frame, /quoted\.js/);
  });

  it('are what a log entry carries', () => {
    const { stack, tsPath } = compiledStack('logged', true, inApp);
    const entries: LogEntry[] = [];
    const backend = new LogBackend(new LevelFilter(presetRules('test')), [{ write: (entry) => entries.push(structuredClone(entry)) }], createRedactor([]));
    backend.logger('saas.test').error('test/failed', 'failed', { stack });
    assert.match(String(entries[0]?.data.stack), new RegExp(`${tsPath.replaceAll('.', '\\.')}:${THROW_LINE}:`));
  });
});

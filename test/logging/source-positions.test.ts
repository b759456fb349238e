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
import { originalPosition, sourceStack } from '../../src/logging/source-positions.js';

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
after(() => rmSync(dir, { recursive: true, force: true }));

/** compiles SOURCE as tsc does for dist/ (a .js and its .js.map), runs it without source maps, returns its stack */
function compiledStack(name: string, withMap: boolean): { stack: string; js: string; tsPath: string } {
  const tsPath = join(dir, `${name}.ts`);
  const js = join(dir, `${name}.js`);
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
    const mapped = sourceStack(stack);
    assert.match(mapped, new RegExp(`at failing \\(${tsPath.replaceAll('.', '\\.')}:${THROW_LINE}:\\d+\\)`));
    assert.ok(!mapped.includes(`${js}:`), 'no frame of the compiled file is left');
    // node's own frames have no map beside them: they stay as they were
    assert.match(mapped, /node:internal\/modules/);
    assert.deepEqual(originalPosition(`file://${js}`, jsLine, 1)?.file, tsPath);
  });

  it('leave a frame as it is when its file has no map', () => {
    const { stack, js } = compiledStack('unmapped', false);
    assert.equal(sourceStack(stack), stack);
    assert.equal(originalPosition(js, 1, 1), undefined);
  });

  it('are what a log entry carries', () => {
    const { stack, tsPath } = compiledStack('logged', true);
    const entries: LogEntry[] = [];
    const backend = new LogBackend(new LevelFilter(presetRules('test')), [{ write: (entry) => entries.push(structuredClone(entry)) }], createRedactor([]));
    backend.logger('saas.test').error('test/failed', 'failed', { stack });
    assert.match(String(entries[0]?.data.stack), new RegExp(`${tsPath.replaceAll('.', '\\.')}:${THROW_LINE}:`));
  });
});

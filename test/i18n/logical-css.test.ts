/**
 * The client's layout mirrors for a right-to-left language (docs/i18n.md, "Right to left"): no
 * class in its sources names a physical side (`ml-4`, `text-left`, `border-r`), only logical
 * ones (`ms-4`, `text-start`, `border-e`); and the check finds the physical ones it should.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { physicalClasses } from '../../scripts/i18n/physical-classes.js';

describe("the client's classes", () => {
  it('name no physical side', () => {
    assert.deepEqual(
      physicalClasses(process.cwd()).map((p) => `${p.at}: ${p.className} (use ${p.instead})`),
      [],
    );
  });

  it('are read by the check: a physical class in a string, a template or a variant is found, a logical one and prose are not', () => {
    const root = mkdtempSync(join(tmpdir(), 'logical-css-'));
    try {
      mkdirSync(join(root, 'src/client/x'), { recursive: true });
      writeFileSync(
        join(root, 'src/client/x/page.tsx'),
        [
          'export const A = () => <div class="ms-4 md:ml-2 text-start">Turn left, then right</div>;',
          // a template literal in the source under test (its `$` and braces spelled apart here)
          `export const B = (on: boolean) => \`pe-2 $\{on ? "pr-8" : ""} hover:text-right rounded-tl-lg border-r -left-1\`;`,
        ].join('\n'),
      );
      assert.deepEqual(
        physicalClasses(root)
          .map((p) => p.className)
          .sort(),
        ['-left-1', 'border-r', 'hover:text-right', 'md:ml-2', 'pr-8', 'rounded-tl-lg'],
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

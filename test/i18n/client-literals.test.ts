/**
 * No text for the reader outside a message (scripts/i18n/client-literals.ts): an English
 * sentence written straight into a page or a toast would show in English in every language,
 * and the catalog check, which sees only `t`, `msg` and `rich`, would not notice.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { englishOutsideMessages } from '../../scripts/i18n/client-literals.js';

describe("the client's words", () => {
  it('are all messages: no sentence outside t(), msg() or rich()', () => {
    assert.deepEqual(englishOutsideMessages(process.cwd()), []);
  });

  it('the check would see one (a toast, a field error, JSX text) and leaves the rest alone', async () => {
    const root = await mkdtemp(join(tmpdir(), 'client-literals-'));
    try {
      await mkdir(join(root, 'src/client/demo'), { recursive: true });
      await writeFile(
        join(root, 'src/client/demo/page.tsx'),
        [
          "const toast = { message: 'Endpoint enabled' };",
          "const errors = { events: 'Pick at least one event type' };",
          'const Page = () => <p class="mt-1 text-sm text-muted">The passwords do not match</p>;',
          "const fine = [t('Saved'), msg('A text kept in a table'), rich('Send it as <0/>', [<code>Authorization: Bearer sk_</code>])];",
          "if (!fine) throw new Error('No route for this page');",
          "console.warn('No handler for event');",
          "const id = 'webhook-secret'; const cls = 'flex flex-wrap gap-2';",
          "function Table({ loadingText = 'Loading…', kind = 'plain' }) { return loadingText + kind; }",
        ].join('\n'),
      );
      const found = englishOutsideMessages(root).map((f) => f.replace(/^[^:]+:\d+: /, ''));
      assert.deepEqual(found, ['"Endpoint enabled"', '"Pick at least one event type"', '"The passwords do not match"', '"Loading…"']);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

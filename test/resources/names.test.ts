/**
 * The names new:resource gives a resource (scripts/resources/spec.ts, files.ts): its five MCP
 * tools, refused past 64 characters; the article before its name in the templates' English
 * ("an invoice", "a unit"), and only where "a" is a word of its own.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { respell } from '../../scripts/resources/files.js';
import { article, names, parseSpec, SpecError, toolNames } from '../../scripts/resources/spec.js';

const spec = (name: string, plural: string) => ({ name: names(name), plural: names(plural) });

describe("new:resource's names", () => {
  it('names the five tools after the resource, and refuses a name whose tool would pass 64 characters', () => {
    assert.deepEqual(toolNames(spec('time-entry', 'time-entries')), [
      'list-time-entries',
      'get-time-entry',
      'create-time-entry',
      'update-time-entry',
      'delete-time-entry',
    ]);
    const longest = `w${'-ab'.repeat(18)}-c`;
    assert.equal(`create-${longest}`.length, 64);
    assert.doesNotThrow(() => parseSpec([longest, 'title:string']));
    assert.throws(
      () => parseSpec([`${longest}d`, 'title:string']),
      (err: unknown) => err instanceof SpecError && /MCP tool would be create-w-ab.*-cd \(65 characters; at most 64\)/.test(err.message),
    );
  });

  it('puts the article its sound takes before the name, and leaves an "a" inside a word alone', () => {
    assert.deepEqual(['invoice', 'time entry', 'unit', 'hour log', 'order', 'user group', 'euro rate'].map(article), ['an', 'a', 'a', 'an', 'an', 'a', 'a']);
    assert.equal(respell('Create a sample item. A sample item is yours.', spec('invoice', 'invoices')), 'Create an invoice. An invoice is yours.');
    assert.equal(respell('Create a sample item.', spec('time-entry', 'time-entries')), 'Create a time entry.');
    assert.equal(respell('the data sample item', spec('invoice', 'invoices')), 'the data invoice');
  });
});

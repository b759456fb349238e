/**
 * Dependencies' install scripts run only when reviewed (issue 38; docs/security.md, "Rules from
 * the security review"): every package of the lockfile that has one is named in package.json's
 * `allowScripts` (approved or denied), and CI installs with `--strict-allow-scripts`, so a new
 * dependency with an unreviewed script fails CI's install instead of running with a notice.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

const root = new URL('../../', import.meta.url);
const read = (name: string) => readFileSync(new URL(name, root), 'utf8');

describe('install scripts', () => {
  it('every package of the lockfile with an install script is reviewed in allowScripts, by name', () => {
    const pkg = JSON.parse(read('package.json')) as { allowScripts?: Record<string, boolean> };
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { hasInstallScript?: boolean; version?: string }> };
    const withScripts = Object.entries(lock.packages)
      .filter(([path, p]) => path && p.hasInstallScript)
      .map(([path, p]) => ({ name: path.replace(/^.*node_modules\//, ''), version: p.version }));
    assert.ok(
      withScripts.some((p) => p.name === 'node'),
      'the node package (its preinstall fetches Node 24)',
    );
    const reviewed = Object.keys(pkg.allowScripts ?? {}).map((entry) => entry.replace(/(.)@[^@]*$/, '$1'));
    const unreviewed = withScripts.filter((p) => !reviewed.includes(p.name)).map((p) => `${p.name}@${p.version}`);
    assert.deepEqual(unreviewed, [], 'review each, then `npm install-scripts approve <name>` or `deny`');
    assert.equal(pkg.allowScripts?.node, true, "node's preinstall must run: without it there is no Node 24");
  });

  it('CI installs with the strict setting', () => {
    const installs = read('.ci/run')
      .split('\n')
      .filter((line) => /^\s*npm (ci|install)\b/.test(line) && !line.includes('--prefix'));
    assert.ok(installs.length > 0, 'CI installs the project');
    for (const line of installs) assert.match(line, /--strict-allow-scripts\b/, line.trim());
  });
});

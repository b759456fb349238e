/**
 * `npm run new:resource -- <name> <field>:<type>[?] ... [--write-role member|admin|owner]
 * [--plural <word>] [--limit <meter>] [--feature <id>] [--dry-run]`: adds a resource of the
 * project's users as one vertical slice (docs/resources.md). Prints every file it writes or
 * changes and the command that runs the new tests; refuses with one line and writes nothing (a
 * name the running system's registries hold included: registries.ts).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { planResource } from './files.js';
import { checkRegistries, readRegistries } from './registries.js';
import { parseSpec, SpecError } from './spec.js';

const root = process.cwd();
try {
  const spec = parseSpec(process.argv.slice(2));
  const plan = planResource(root, spec);
  // its schemas, events, audit actions, query kinds and scopes: against what the running code registered
  checkRegistries(spec, await readRegistries());
  if (!spec.dryRun) {
    for (const change of plan) {
      mkdirSync(dirname(join(root, change.path)), { recursive: true });
      writeFileSync(join(root, change.path), change.content);
    }
    // the resource's names and fields change line lengths: the project's formatter lays them out
    const biome = join(root, 'node_modules/.bin/biome');
    const code = plan.map((c) => c.path).filter((p) => /\.tsx?$/.test(p));
    if (existsSync(biome)) spawnSync(biome, ['format', '--write', ...code], { cwd: root, stdio: 'ignore' });
  }
  const verb = spec.dryRun ? 'would write' : 'wrote';
  console.log(`${spec.dryRun ? 'Dry run: nothing written.\n' : ''}${spec.plural.human}: ${verb}`);
  for (const change of plan) console.log(`  ${change.changed ? 'changed' : 'new    '}  ${change.path}`);
  console.log(`\nRun its tests: node scripts/run-tests.mjs 'test/${spec.plural.kebab}/*.test.ts'`);
  console.log(`Start the server (the migration runs) and open /orgs/<id>/${spec.plural.kebab}; docs/${spec.plural.kebab}.md says where its rules go.`);
} catch (err) {
  if (!(err instanceof SpecError)) throw err;
  console.error(`new:resource: ${err.message}`);
  process.exit(1);
}

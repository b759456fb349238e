/**
 * Writes the OpenAPI document of a system built with a fixed configuration (memory database,
 * test profile, one OIDC provider, billing plans) to a file, or stdout: a restructuring that must
 * not change the API is checked by diffing two snapshots (docs/architecture.md). Keys are sorted,
 * so the order in which modules register their schemas does not show as a difference.
 *
 *   node --import tsx scripts/openapi-snapshot.ts [out.json]
 */
import { writeFile } from 'node:fs/promises';
import { buildSnapshotSystem } from './system-snapshot.js';

/** The same value with every object's keys in sorted order (arrays keep theirs: their order means something). */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
  );
}

const system = await buildSnapshotSystem();
try {
  const res = await system.app.inject({ method: 'GET', url: '/openapi/openapi.json' });
  const text = `${JSON.stringify(sortKeys(JSON.parse(res.body)), null, 2)}\n`;
  const out = process.argv[2];
  if (out) await writeFile(out, text);
  else process.stdout.write(text);
} finally {
  await system.stop();
}

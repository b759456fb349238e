/**
 * The node flags `npm start` runs the server with (package.json), which its measured costs
 * assume: without `--no-allocation-site-pretenuring` a server under load spends up to twice the
 * CPU per request in about half of its starts (docs/deployment.md). A production server started
 * some other way (`node dist/server.js` in an image of one's own) says once which are missing.
 */
import { readFileSync } from 'node:fs';

/** V8 takes `--a_b` for `--a-b`; a flag's value may differ (`--max-semi-space-size=16` is a choice) */
const flagName = (flag: string) => flag.split('=')[0].replace(/_/g, '-');

/** `npm start`'s node flags, read from package.json; empty when it cannot be read. */
export function startFlags(packageJson: URL = new URL('../../package.json', import.meta.url)): string[] {
  try {
    const { scripts } = JSON.parse(readFileSync(packageJson, 'utf8')) as { scripts?: { start?: string } };
    const flags = /\bnode ((?:--\S+ )*)dist\/server\.js/.exec(scripts?.start ?? '')?.[1];
    return flags ? flags.trim().split(/\s+/) : [];
  } catch {
    return [];
  }
}

/** The start flags this process was not given (by name), in npm start's order. */
export function missingStartFlags(execArgv: readonly string[], wanted: readonly string[] = startFlags()): string[] {
  const given = new Set(execArgv.map(flagName));
  return wanted.filter((flag) => !given.has(flagName(flag)));
}

/**
 * Minimum levels per kind and namespace pattern. Rules are checked last to first, so later
 * rules (the LOG_LEVELS overrides) win; a namespace no rule matches gets `info`.
 * Decisions are cached per (kind, namespace) so a filtered-out signal costs one map lookup.
 */
import type { AppEnv } from '../config.js';
import { isLevel, LEVEL_VALUE, type Kind, type Level } from './levels.js';

export interface LevelRule {
  /** undefined: both kinds */
  kind?: Kind;
  /** exact namespace, or a prefix ending in `*` (`saas.*` matches `saas.http`) */
  ns: string;
  level: Level;
}

export const DEFAULT_LEVEL: Level = 'info';

/** The per-environment presets (docs/logging.md, "Minimum levels"). */
export function presetRules(env: AppEnv): LevelRule[] {
  switch (env) {
    case 'dev':
      return [
        { kind: 'log', ns: 'saas.*', level: 'debug' },
        ...['pg', 'pg-pool', 'fastify', 'watcher'].map((ns): LevelRule => ({ kind: 'slf4j', ns, level: 'warn' })),
      ];
    case 'prod':
      return [
        { kind: 'log', ns: 'saas.*', level: 'info' },
        { kind: 'slf4j', ns: 'pg-pool', level: 'info' },
      ];
    case 'test':
      return [
        { kind: 'log', ns: 'saas.*', level: 'info' },
        { kind: 'slf4j', ns: 'pg-pool', level: 'error' },
        { kind: 'slf4j', ns: 'pg', level: 'error' },
      ];
  }
}

/**
 * Parses `LOG_LEVELS`, e.g. `saas.*=trace,pg=warn,slf4j:fastify=debug`. A `log:` or `slf4j:`
 * prefix limits a rule to one kind. Throws with the offending part on a bad entry.
 */
export function parseLevelOverrides(raw: string): LevelRule[] {
  return raw
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const m = /^(?:(log|slf4j):)?([^=\s]+)\s*=\s*([a-z]+)$/.exec(part);
      if (!m || !isLevel(m[3])) {
        throw new Error(`LOG_LEVELS entry "${part}" must look like "<namespace>=<level>" with level one of trace, debug, info, warn, error, fatal`);
      }
      return { kind: m[1] as Kind | undefined, ns: m[2], level: m[3] };
    });
}

function matches(pattern: string, ns: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('*')) return ns.startsWith(pattern.slice(0, -1));
  return pattern === ns;
}

export class LevelFilter {
  private readonly cache: Record<Kind, Map<string, number>> = { log: new Map(), slf4j: new Map() };

  constructor(private readonly rules: readonly LevelRule[]) {}

  /** The minimum level value that passes for this kind and namespace. */
  minLevel(kind: Kind, ns: string): number {
    let min = this.cache[kind].get(ns);
    if (min === undefined) {
      min = LEVEL_VALUE[DEFAULT_LEVEL];
      for (let i = this.rules.length - 1; i >= 0; i--) {
        const rule = this.rules[i];
        if ((rule.kind === undefined || rule.kind === kind) && matches(rule.ns, ns)) {
          min = LEVEL_VALUE[rule.level];
          break;
        }
      }
      this.cache[kind].set(ns, min);
    }
    return min;
  }

  allows(kind: Kind, ns: string, level: Level): boolean {
    return LEVEL_VALUE[level] >= this.minLevel(kind, ns);
  }
}

/**
 * A Kysely query of fixed shape, built and compiled once: each call only fills in its
 * parameters. Building and compiling the operation tree costs ~10 µs per query
 * (docs/performance.md), which a hot lookup such as the account by id need not pay each time.
 * The query still runs through Kysely (`db.executeQuery`), on the current data.
 */
import type { Compilable, CompiledQuery } from 'kysely';

const MARK = '\u0000kysely-parameter-';

/**
 * `build` receives `param(i)`, a stand-in for the i-th argument, and returns the query. Each
 * stand-in must be used exactly once, as a parameter value (compared as is, it would not be
 * found: an error at start-up, not a wrong query later).
 */
export function compiledOnce<R>(arity: number, build: (param: (i: number) => string) => Compilable<R>): (...args: unknown[]) => CompiledQuery<R> {
  const compiled = build((i) => `${MARK}${i}`).compile();
  const argumentAt = compiled.parameters.map((p) => (typeof p === 'string' && p.startsWith(MARK) ? Number(p.slice(MARK.length)) : -1));
  for (let i = 0; i < arity; i++) {
    if (argumentAt.filter((a) => a === i).length !== 1) throw new Error(`compiledOnce: argument ${i} must appear once as a parameter of: ${compiled.sql}`);
  }
  const fixed = compiled.parameters;
  return (...args) => ({ ...compiled, parameters: argumentAt.map((a, j) => (a < 0 ? fixed[j] : args[a])) });
}

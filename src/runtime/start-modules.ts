/**
 * Starts a list of modules in order (src/runtime/module.ts): reads every module's settings
 * first, so a bad variable stops start-up before anything opens; then starts each with the
 * services of those before it, gathering what they contribute. Stops are registered as each
 * module starts, so they run in reverse.
 */
import type { Config } from '../config.js';
import type { Authenticator } from '../http/app.js';
import type { AccountGuard, UsageGate } from '../http/routes.js';
import type { Contributions, ModuleContext, ModuleRef, Started } from './module.js';
import type { Env } from './settings.js';
import type { Stops } from './infrastructure.js';

/** A module of any services and settings, as a list holds them (each keeps its own types where it is declared). */
export interface AnyModule {
  readonly name: string;
  settings?(env: Env, config: Config): unknown;
  readonly declares?: Readonly<Record<string, readonly unknown[]>>;
  start(ctx: ModuleContext, settings: never): Started<unknown> | Promise<Started<unknown>>;
}

/** Every module's settings, read and validated; throws the first ConfigError. */
export function readSettings(modules: readonly AnyModule[], config: Config): Map<AnyModule, unknown> {
  return new Map(modules.map((module) => [module, module.settings ? module.settings(config.vars, config) : undefined]));
}

export interface StartedModules extends Contributions {
  authenticator: Authenticator | undefined;
  accountGuard: AccountGuard | undefined;
  usageGate: UsageGate | undefined;
  /** tells every module the app is ready (cross-module checks, warm-ups) */
  ready(): void;
}

export async function startModules(
  modules: readonly AnyModule[],
  base: Omit<ModuleContext, 'use' | 'contributed' | 'declared'>,
  stops: Stops,
  settings = readSettings(modules, base.config),
  /** filled with each module's services, by module */
  services = new Map<unknown, unknown>(),
): Promise<StartedModules> {
  const contributed: Contributions = { schemas: [], routeGroups: [], queries: [], pageFields: {}, mounts: [], pageOrigins: { img: [], connect: [] } };
  const started: Array<Started<unknown>> = [];
  let authenticator: Authenticator | undefined;
  let accountGuard: AccountGuard | undefined;
  let usageGate: UsageGate | undefined;
  for (const module of modules) {
    const ctx: ModuleContext = {
      ...base,
      contributed,
      declared: <T>(key: string) => modules.flatMap((m) => (m.declares?.[key] ?? []) as T[]),
      use<S>(needed: ModuleRef<S>): S {
        if (!services.has(needed)) throw new Error(`Module ${module.name} needs ${needed.name}, which is not started before it (see system.ts)`);
        return services.get(needed) as S;
      },
    };
    // the settings were read by this same module's `settings`
    const result = await module.start(ctx, settings.get(module) as never);
    services.set(module, result.services);
    started.push(result);
    if (result.stop) stops.add(module.name, result.stop);
    contributed.schemas.push(...(result.schemas ?? []));
    contributed.routeGroups.push(...(result.routeGroups ?? []));
    contributed.queries.push(...(result.queries ?? []));
    contributed.mounts.push(...(result.mounts ?? []));
    contributed.pageOrigins.img.push(...(result.pageOrigins?.img ?? []));
    contributed.pageOrigins.connect.push(...(result.pageOrigins?.connect ?? []));
    Object.assign(contributed.pageFields, result.pageFields);
    authenticator = theOne('an authenticator', authenticator, result.authenticator, module.name);
    accountGuard = theOne('an account guard', accountGuard, result.accountGuard, module.name);
    usageGate = theOne('a usage gate', usageGate, result.usageGate, module.name);
  }
  return {
    ...contributed,
    authenticator,
    accountGuard,
    usageGate,
    ready() {
      for (const result of started) result.ready?.(contributed);
    },
  };
}

/** What only one module may provide: the earlier one, or the new one; both is a wiring mistake. */
function theOne<T>(what: string, earlier: T | undefined, given: T | undefined, moduleName: string): T | undefined {
  if (earlier && given) throw new Error(`Module ${moduleName} provides ${what}, and an earlier module did too`);
  return given ?? earlier;
}

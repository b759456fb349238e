/**
 * Settings as start-up reads them: the shared configuration and every module's own settings
 * (src/runtime/module.ts). A bad variable throws the same ConfigError that stops start-up.
 */
import { loadConfig, type Config, type Env } from '../../src/config.js';
import type { Module } from '../../src/runtime/module.js';
import { checkSettings } from '../../src/system.js';

/** The shared configuration, after every module's settings were read too (as buildSystem does). */
export function loadAll(env: Env): Config {
  const config = loadConfig(env);
  checkSettings(config);
  return config;
}

/** One module's settings, read with every other module's (so a bad variable anywhere throws). */
export function settingsOf<S>(module: Module<unknown, S>, env: Env): S {
  const config = loadConfig(env);
  return checkSettings(config).get(module as never) as S;
}

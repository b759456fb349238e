import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LevelFilter, parseLevelOverrides, presetRules } from '../../src/logging/filter.js';
import { createRedactor, DEFAULT_REDACT_KEYS, REDACTED } from '../../src/logging/redact.js';

const min = (env: 'dev' | 'prod' | 'test', kind: 'log' | 'slf4j', ns: string, overrides = '') =>
  Object.entries({ trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 }).find(
    ([, v]) => v === new LevelFilter([...presetRules(env), ...parseLevelOverrides(overrides)]).minLevel(kind, ns),
  )?.[0];

describe('level filter presets (the spec table)', () => {
  it('dev: saas.* debug; driver, pool, HTTP server and watcher warn; others info', () => {
    assert.equal(min('dev', 'log', 'saas.http'), 'debug');
    for (const ns of ['pg', 'pg-pool', 'fastify', 'watcher']) assert.equal(min('dev', 'slf4j', ns), 'warn');
    assert.equal(min('dev', 'slf4j', 'ioredis'), 'info');
    assert.equal(min('dev', 'log', 'other'), 'info');
  });
  it('prod: saas.* info; pool info', () => {
    assert.equal(min('prod', 'log', 'saas.account'), 'info');
    assert.equal(min('prod', 'slf4j', 'pg-pool'), 'info');
  });
  it('test: saas.* info; pool and driver error', () => {
    assert.equal(min('test', 'log', 'saas.db'), 'info');
    assert.equal(min('test', 'slf4j', 'pg-pool'), 'error');
    assert.equal(min('test', 'slf4j', 'pg'), 'error');
  });
  it('applies LOG_LEVELS on top, optionally per kind', () => {
    assert.equal(min('prod', 'log', 'saas.http', 'saas.*=trace'), 'trace');
    assert.equal(min('dev', 'slf4j', 'pg', 'pg=error'), 'error');
    assert.equal(min('dev', 'slf4j', 'fastify', 'log:fastify=trace'), 'warn', 'a log: rule does not touch slf4j');
    assert.throws(() => parseLevelOverrides('saas.*=loud'), /LOG_LEVELS/);
  });
  it('a kind-specific rule does not apply to the other kind', () => {
    assert.equal(min('dev', 'slf4j', 'saas.http'), 'info');
  });
});

describe('redaction', () => {
  const redact = createRedactor(['api-key']);
  it('replaces every default key at any depth, case- and separator-insensitively', () => {
    const input: Record<string, unknown> = {};
    for (const k of DEFAULT_REDACT_KEYS) input[k] = `v-${k}`;
    const out = redact({
      ...input,
      nested: { deeper: [{ PASSWORD: 'x', Access_Token: 'y', refreshToken: 'z', ':user/password': 'w' }] },
      keep: 'me',
    }) as Record<string, any>;
    for (const k of DEFAULT_REDACT_KEYS) assert.equal(out[k], REDACTED, k);
    assert.deepEqual(out.nested.deeper[0], { PASSWORD: REDACTED, Access_Token: REDACTED, refreshToken: REDACTED, ':user/password': REDACTED });
    assert.equal(out.keep, 'me');
  });
  it('covers credential headers and configured extra keys', () => {
    const out = redact({ cookie: 'a', 'set-cookie': ['b'], 'x-csrf-token': 'c', 'stripe-signature': 'd', API_KEY: 'e' }) as Record<string, unknown>;
    assert.deepEqual(Object.values(out), Array(5).fill(REDACTED));
  });
  it('never modifies its input and survives cycles', () => {
    const input: Record<string, unknown> = { password: 'p' };
    input.self = input;
    const out = redact(input) as Record<string, unknown>;
    assert.equal(input.password, 'p');
    assert.equal(out.self, '[CIRCULAR]');
  });
});

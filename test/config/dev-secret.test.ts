/**
 * Without JWT_SECRET, dev on the PGlite directory keeps one random secret beside the data, so
 * sessions and what is encrypted with the key derived from it (two-factor secrets, webhook
 * signing secrets) survive a restart; elsewhere (test, another database) a random one per start,
 * and prod refuses to start without it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { SecretBox } from '../../src/auth/secret-box.js';
import { ConfigError, devSecretFileOf, loadConfig } from '../../src/config.js';

describe('the development secret', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dev-secret-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const pgliteDir = join(dir, 'data', 'pglite');

  it('is made at the first dev start, kept beside the PGlite directory (0600), and read at the next', () => {
    const first = loadConfig({ APP_ENV: 'dev', PGLITE_DIR: pgliteDir });
    const file = join(dir, 'data', 'dev-jwt-secret');
    assert.equal(first.jwtSecretFile, file);
    assert.equal(devSecretFileOf(pgliteDir), file);
    assert.equal(first.jwtSecretGenerated, false);
    assert.equal(readFileSync(file, 'utf8').trim(), first.jwtSecret);
    assert.ok(first.jwtSecret.length >= 32);
    assert.equal(statSync(file).mode & 0o777, 0o600);

    const second = loadConfig({ APP_ENV: 'dev', PGLITE_DIR: pgliteDir });
    assert.equal(second.jwtSecret, first.jwtSecret);
    assert.equal(second.encryptionKey, first.encryptionKey);
    // a two-factor secret sealed before the restart opens after it
    const sealed = new SecretBox(first.encryptionKey, 'totp').seal('JBSWY3DPEHPK3PXP', 'account-1');
    assert.equal(new SecretBox(second.encryptionKey, 'totp').open(sealed, 'account-1'), 'JBSWY3DPEHPK3PXP');
  });

  it('is not used when JWT_SECRET is set, nor in test, nor on another database', () => {
    const given = 'x'.repeat(40);
    assert.equal(loadConfig({ APP_ENV: 'dev', PGLITE_DIR: pgliteDir, JWT_SECRET: given }).jwtSecret, given);
    for (const env of [
      { APP_ENV: 'test', PGLITE_DIR: join(dir, 'other', 'pglite') },
      { APP_ENV: 'dev', DATABASE_URL: 'memory://', PGLITE_DIR: join(dir, 'other', 'pglite') },
    ]) {
      const a = loadConfig(env);
      const b = loadConfig(env);
      assert.equal(a.jwtSecretGenerated, true);
      assert.equal(a.jwtSecretFile, undefined);
      assert.notEqual(a.jwtSecret, b.jwtSecret);
    }
    assert.throws(() => readFileSync(join(dir, 'other', 'dev-jwt-secret')), { code: 'ENOENT' });
    assert.throws(
      () => loadConfig({ APP_ENV: 'prod', PGLITE_DIR: pgliteDir }),
      (err: unknown) => err instanceof ConfigError && /JWT_SECRET/.test(err.message),
    );
  });

  it('a kept secret too short stops the start with a message naming the file', () => {
    const short = join(dir, 'short', 'pglite');
    loadConfig({ APP_ENV: 'dev', PGLITE_DIR: short });
    writeFileSync(devSecretFileOf(short), 'too short\n');
    assert.throws(
      () => loadConfig({ APP_ENV: 'dev', PGLITE_DIR: short }),
      (err: unknown) => err instanceof ConfigError && err.message.includes(devSecretFileOf(short)),
    );
  });

  it('a secret sealed with another key says what to check, not OpenSSL words', () => {
    const sealed = new SecretBox('a'.repeat(40), 'totp').seal('secret', 'account-1');
    assert.throws(() => new SecretBox('b'.repeat(40), 'totp').open(sealed, 'account-1'), /sealed with another ENCRYPTION_KEY/);
  });
});

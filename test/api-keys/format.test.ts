/** The key's text (shape, entropy, checksum) and its redaction wherever it shows up in the log. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { API_KEY_LENGTH, hashApiKey, newApiKey, parseApiKey } from '../../src/api-keys/format.js';
import { createRedactor } from '../../src/logging/redact.js';
import { redactApiKeys, redactText } from '../../src/logging/redact-links.js';

describe('API key format', () => {
  it('makes sk_<prefix>_<secret><checksum> in base62, different every time, stored as SHA-256', () => {
    const keys = Array.from({ length: 200 }, () => newApiKey());
    for (const { key, prefix, hash } of keys) {
      assert.match(key, /^sk_[0-9A-Za-z]{8}_[0-9A-Za-z]{38}$/);
      assert.equal(key.length, API_KEY_LENGTH);
      assert.equal(key.slice(3, 11), prefix);
      assert.equal(hash, hashApiKey(key));
      assert.match(hash, /^[0-9a-f]{64}$/);
      assert.deepEqual(parseApiKey(key), { prefix, hash });
    }
    assert.equal(new Set(keys.map((k) => k.key.slice(12, 44))).size, keys.length);
    // every base62 character turns up in the secrets: no bias towards part of the alphabet
    assert.equal(new Set(keys.flatMap((k) => [...k.key.slice(12, 44)])).size, 62);
  });

  it('refuses a changed character, a wrong length or alphabet before any lookup', () => {
    const { key } = newApiKey();
    for (let i = 12; i < key.length; i++) {
      const changed = key.slice(0, i) + (key[i] === 'a' ? 'b' : 'a') + key.slice(i + 1);
      assert.equal(parseApiKey(changed), undefined, `character ${i}`);
    }
    for (const text of [
      '',
      'sk_',
      key.slice(0, -1),
      `${key}a`,
      key.replace('sk_', 'pk_'),
      key.replace(/_([^_]*)$/, '-$1'),
      `${key.slice(0, 20)}-${key.slice(21)}`,
    ]) {
      assert.equal(parseApiKey(text), undefined, text);
    }
  });
});

describe('API keys in the log', () => {
  const { key, prefix } = newApiKey();
  const secret = key.slice(12);

  it('keeps the prefix of a key anywhere in a text and removes the rest', () => {
    assert.equal(redactApiKeys(`Bearer ${key}`), `Bearer sk_${prefix}_[REDACTED]`);
    assert.equal(redactApiKeys(`GET /api/orgs/${key}/members => 400`), `GET /api/orgs/sk_${prefix}_[REDACTED]/members => 400`);
    assert.equal(redactApiKeys('stripe sk_live_51HxYzAbCdEfGhIjKl and sk_0123456789abcdefghij'), 'stripe sk_live_[REDACTED] and sk_[REDACTED]');
    assert.equal(redactText(`https://x/cb?token=abc&k=${key}`), `https://x/cb?token=[REDACTED]&k=sk_${prefix}_[REDACTED]`);
    for (const text of ['task_list_done', 'disk_usage', 'risk_high', 'sk_', 'sk_short', 'GET /api/account/me => 200']) assert.equal(redactApiKeys(text), text);
  });

  it('removes a key from data at any depth, under any key name, and the Authorization header whole', () => {
    const redact = createRedactor();
    const out = JSON.stringify(
      redact({
        headers: { authorization: `Bearer ${key}` },
        params: { id: key, note: `use ${key} here` },
        list: [[key]],
        'x-api-key': key,
      }),
    );
    assert.ok(!out.includes(secret), out);
    assert.ok(out.includes('"authorization":"[REDACTED]"'), out);
    assert.ok(out.includes(`sk_${prefix}_[REDACTED]`), out);
  });
});

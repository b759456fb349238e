/** redactLinkTokens: secrets in link query strings never reach the log. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { redactLinkTokens } from '../../src/logging/redact-links.js';
import { createRedactor } from '../../src/logging/redact.js';

describe('redactLinkTokens', () => {
  it('redacts token, code and key parameters and their *_token / *_key forms', () => {
    const cases: Array<[string, string]> = [
      ['https://app.example.com/verify-email?token=abc123', 'https://app.example.com/verify-email?token=[REDACTED]'],
      ['see http://x/reset-password?token=a-b_c.d~e and more', 'see http://x/reset-password?token=[REDACTED] and more'],
      ['/cb?state=s1&code=4/0Ad&scope=email', '/cb?state=s1&code=[REDACTED]&scope=email'],
      ['/x?KEY=secret#frag', '/x?KEY=[REDACTED]#frag'],
      ['/a?access_token=t1&refresh-token=t2&api_key=k', '/a?access_token=[REDACTED]&refresh-token=[REDACTED]&api_key=[REDACTED]'],
      ['/oauth#access_token=t&token_type=bearer', '/oauth#access_token=[REDACTED]&token_type=bearer'],
      ['<a href="/i?x=1&amp;token=abc">', '<a href="/i?x=1&amp;token=[REDACTED]">'],
      ['/login?next=%2Fverify-email%3Ftoken%3Dabc%26x%3D1', '/login?next=%2Fverify-email%3Ftoken%3D[REDACTED]%26x%3D1'],
      ['"https://a/confirm-email?token=xyz"', '"https://a/confirm-email?token=[REDACTED]"'],
    ];
    for (const [input, expected] of cases) assert.equal(redactLinkTokens(input), expected, input);
  });

  it('leaves everything else as it is', () => {
    for (const text of [
      'GET /api/account/me => 200',
      'token expired',
      'https://x/?monkey=banana&passcode=1',
      'a=1&b=2',
      '/keys?sort=asc',
      'code: 550 refused',
      '',
    ])
      assert.equal(redactLinkTokens(text), text);
  });
});

describe('the redactor', () => {
  it('redacts link tokens in string values at any depth, and leaves other strings alone', () => {
    const redact = createRedactor();
    const link = 'https://app.example.com/reset-password?token=s3cr3t-v4lue&x=1';
    const out = redact({ msg: `open ${link}`, nested: { referer: link, list: [link] }, plain: 'no link here' }) as Record<string, any>;
    const text = JSON.stringify(out);
    assert.ok(!text.includes('s3cr3t-v4lue'), text);
    assert.equal(out.plain, 'no link here');
    assert.equal(out.nested.referer, 'https://app.example.com/reset-password?token=[REDACTED]&x=1');
  });
});

/**
 * Server-side request forgery, with WEBHOOK_ALLOW_PRIVATE off and host names answered by a DNS
 * server started here (WEBHOOK_DNS_SERVERS): private, loopback and link-local addresses are
 * refused at creation, as literals and behind names; a name that resolved to a public address at
 * creation and to 127.0.0.1 at delivery (DNS rebinding) is refused at connection time, the
 * attempt recorded with `address-not-allowed` and the receiver never reached. With private
 * addresses allowed, the sender connects to the address it checked, naming the host.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { allowedAddresses, AddressNotAllowed, refusalOf } from '../../src/webhooks/address-guard.js';
import { WebhookSender } from '../../src/webhooks/sender.js';
import { parseRetrySchedule, webhookSettings } from '../../src/webhooks/settings.js';
import { webhooksModule } from '../../src/webhooks/module.js';
import { ConfigError } from '../../src/runtime/settings.js';
import { account, as, createOrg, type TestAccount } from '../orgs/support.js';
import { settingsOf } from '../support/settings.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { deliveries, dnsServer, receiver, waitFor, type Receiver, type TestDns } from './support.js';

const PUBLIC = '93.184.216.34';

describe('address rules', () => {
  it('classify with ipaddr.js ranges: link-local always refused, private lifted by WEBHOOK_ALLOW_PRIVATE, only unicast otherwise', () => {
    const table: Array<[string, string | null, string | null]> = [
      // address, refusal by default, refusal with private allowed
      [PUBLIC, null, null],
      ['2606:2800:220:1:248:1893:25c8:1946', null, null],
      ['127.0.0.1', 'private', null],
      ['127.8.9.10', 'private', null],
      ['10.1.2.3', 'private', null],
      ['172.16.0.1', 'private', null],
      ['192.168.1.1', 'private', null],
      ['100.64.0.1', 'private', null],
      ['0.0.0.0', 'private', null],
      ['::1', 'private', null],
      ['::', 'private', null],
      ['fd00::1', 'private', null],
      ['::ffff:127.0.0.1', 'private', null],
      ['::ffff:10.0.0.1', 'private', null],
      ['169.254.169.254', 'link-local', 'link-local'],
      ['169.254.0.1', 'link-local', 'link-local'],
      ['fe80::1', 'link-local', 'link-local'],
      ['::ffff:169.254.169.254', 'link-local', 'link-local'],
      ['224.0.0.1', 'not-routable', 'not-routable'],
      ['255.255.255.255', 'not-routable', 'not-routable'],
      ['192.0.2.1', 'not-routable', 'not-routable'],
      ['ff02::1', 'not-routable', 'not-routable'],
      ['2002:7f00:1::1', 'not-routable', 'not-routable'],
      ['64:ff9b::7f00:1', 'not-routable', 'not-routable'],
      // IPv4-compatible (::/96): never reached, whatever IPv4 address it carries
      ['::7f00:1', 'not-routable', 'not-routable'],
      ['::a00:1', 'not-routable', 'not-routable'],
      ['::808:808', 'not-routable', 'not-routable'],
      ['::127.0.0.1', 'not-routable', 'not-routable'],
      ['::8.8.8.8', 'not-routable', 'not-routable'],
      ['not an address', 'not-routable', 'not-routable'],
    ];
    for (const [address, strict, lax] of table) {
      assert.equal(refusalOf(address, false), strict, address);
      assert.equal(refusalOf(address, true), lax, address);
    }
  });

  it('refuse a name when any of its addresses is refused', async () => {
    const mixed = async () => [
      { address: PUBLIC, family: 4 as const },
      { address: '10.0.0.1', family: 4 as const },
    ];
    await assert.rejects(allowedAddresses('mixed.example', mixed, false), AddressNotAllowed);
    assert.equal((await allowedAddresses('mixed.example', mixed, true)).length, 2);
    // an IP literal is judged itself, never resolved
    const never = async () => {
      throw new Error('resolved');
    };
    await assert.rejects(allowedAddresses('127.0.0.1', never, false), AddressNotAllowed);
    assert.deepEqual(await allowedAddresses('::1', never, true), [{ address: '::1', family: 6 }]);
  });

  it('read the settings, naming the variable when one is wrong', () => {
    const base = { APP_ENV: 'test', JWT_SECRET: 'x'.repeat(40) };
    const s = settingsOf(webhooksModule, base);
    assert.equal(s.timeoutMs, 10_000);
    assert.deepEqual(
      s.retryScheduleMs,
      [5, 300, 1800, 7200, 18000, 36000, 36000].map((n) => n * 1000),
    );
    assert.equal(s.disableAfterMs, 432_000_000);
    assert.equal(s.allowPrivate, false);
    assert.equal(s.requireHttps, false);
    assert.equal(webhookSettings({}, true).requireHttps, true);
    assert.deepEqual(parseRetrySchedule('0.5, 2'), [500, 2000]);
    for (const [name, value] of [
      ['WEBHOOK_TIMEOUT', 'soon'],
      ['WEBHOOK_TIMEOUT', '0'],
      ['WEBHOOK_RETRY_SCHEDULE', '5,-1'],
      ['WEBHOOK_RETRY_SCHEDULE', '5,,6'],
      ['WEBHOOK_RETRY_SCHEDULE', '999999999'],
      ['WEBHOOK_DISABLE_AFTER', '1d'],
      ['WEBHOOK_ALLOW_PRIVATE', 'yes please'],
      ['WEBHOOK_DNS_SERVERS', 'dns.example.com'],
      ['WEBHOOK_LEASE_MS', '5000'],
    ] as const) {
      assert.throws(
        () => settingsOf(webhooksModule, { ...base, [name]: value }),
        (err: Error) => err instanceof ConfigError && err.message.includes(name),
        `${name}=${value}`,
      );
    }
  });

  it('the sender resolves once per attempt and connects to the address it checked', async () => {
    const hook = await receiver();
    try {
      let asked = 0;
      // a resolver that would answer a refused address the second time: the connection never asks it again
      const rebinding = async () => (asked++ === 0 ? [{ address: '127.0.0.1', family: 4 as const }] : [{ address: '169.254.169.254', family: 4 as const }]);
      const sender = new WebhookSender({ timeoutMs: 2000, resolve: rebinding, allowPrivate: true, userAgent: 'test' });
      const result = await sender.send({
        url: `http://hooks.example.test:${hook.port}/pinned`,
        messageId: 'msg_1',
        body: '{}',
        secrets: ['whsec_' + Buffer.alloc(32, 1).toString('base64')],
      });
      assert.equal(result.ok, true, JSON.stringify(result));
      assert.equal(asked, 1);
      assert.equal(hook.received[0].headers.host, `hooks.example.test:${hook.port}`);
      const refused = await sender.send({ url: `http://hooks.example.test:${hook.port}/pinned`, messageId: 'msg_2', body: '{}', secrets: ['whsec_AAAA'] });
      assert.deepEqual({ ...refused, durationMs: 0 }, { ok: false, statusCode: null, durationMs: 0, error: 'address-not-allowed', response: null });
      assert.equal(hook.received.length, 1);
    } finally {
      await hook.close();
    }
  });
});

for (const db of testDatabases()) {
  describe(`request forgery refused on ${db.name}`, () => {
    let t: TestSystem;
    let owner: TestAccount;
    let orgId: string;
    let dns: TestDns;
    let hook: Receiver;

    before(async () => {
      hook = await receiver();
      dns = await dnsServer((name, nth) => {
        if (name === 'loopback.hooks.test') return ['127.0.0.1'];
        if (name === 'private.hooks.test') return ['10.0.0.7'];
        if (name === 'metadata.hooks.test') return ['169.254.169.254'];
        if (name === 'mixed.hooks.test') return [PUBLIC, '192.168.0.10'];
        // public when the endpoint is created, loopback afterwards
        if (name === 'rebind.hooks.test') return nth === 0 ? [PUBLIC] : ['127.0.0.1'];
        return [];
      });
      t = await startSystem(db, { WEBHOOK_DNS_SERVERS: dns.server, WEBHOOK_POLL_MS: '20', WEBHOOK_RETRY_SCHEDULE: '0', WEBHOOK_TIMEOUT: '2' });
      owner = await account(t);
      orgId = await createOrg(t, owner, 'Guarded');
    });
    after(async () => {
      await t?.stop();
      await dns?.close();
      await hook?.close();
    });

    it('refuses private, loopback and metadata addresses at creation, as literals and behind names', async () => {
      const port = hook.port;
      for (const url of [
        `http://127.0.0.1:${port}/x`,
        `http://localhost:${port}/x`,
        `http://[::1]:${port}/x`,
        'http://10.0.0.1/x',
        'http://192.168.1.1/x',
        'http://169.254.169.254/latest/meta-data/',
        'http://[::ffff:127.0.0.1]/x',
        'http://0.0.0.0/x',
        'http://[::7f00:1]/x',
        'http://[::127.0.0.1]/x',
        `http://loopback.hooks.test:${port}/x`,
        'http://private.hooks.test/x',
        'http://metadata.hooks.test/x',
        'http://mixed.hooks.test/x',
        'http://nowhere.hooks.test/x',
      ]) {
        const res = await as(t, owner, 'POST', `/api/orgs/${orgId}/webhooks`, { url, events: ['*'] });
        assert.equal(res.status, 400, `${url}: ${res.text}`);
        assert.equal(res.body.errors[0].path, '/url', url);
      }
      const updated = await as(t, owner, 'GET', `/api/orgs/${orgId}/webhooks`);
      assert.deepEqual(updated.body.webhooks, []);
    });

    it('refuses at connection time a name that resolves to 127.0.0.1 after its creation (DNS rebinding)', async () => {
      const created = await as(t, owner, 'POST', `/api/orgs/${orgId}/webhooks`, {
        url: `http://rebind.hooks.test:${hook.port}/rebound`,
        events: ['organization.updated'],
      });
      assert.equal(created.status, 201, created.text);
      // changing the URL to a refused one is refused as at creation
      const patched = await as(t, owner, 'PATCH', `/api/orgs/${orgId}/webhooks/${created.body.id}`, { url: `http://loopback.hooks.test:${hook.port}/x` });
      assert.equal(patched.status, 400);
      assert.equal((await as(t, owner, 'PATCH', `/api/orgs/${orgId}`, { name: 'Guarded, renamed' })).status, 200);
      const [delivery] = await waitFor('the refused attempts', async () => {
        const log = await deliveries(t, owner, orgId, created.body.id);
        return log[0]?.status === 'failed' ? log : undefined;
      });
      assert.deepEqual(
        delivery.attempts.map((a: { 'status-code': number | null; error: string }) => [a['status-code'], a.error]),
        [
          [null, 'address-not-allowed'],
          [null, 'address-not-allowed'],
        ],
      );
      await sleep(100);
      assert.equal(hook.received.length, 0, 'the receiver on 127.0.0.1 was never reached');
      assert.ok(dns.asked.filter((q) => q === 'rebind.hooks.test/A').length >= 3, 'the name was resolved again at each attempt');
    });
  });
}

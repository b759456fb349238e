/**
 * The Webhooks page's events against a fake transport: its route; loading endpoints and event
 * types (not for a member); creating one (the picker's `*` alone, field errors from the server
 * beside their fields, a blank picker refused before asking); secrets revealed, hidden, rotated
 * and forgotten when the page is entered again; test, enable and delete; the delivery log with
 * its filter, "load more" and retry.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { transitJson } from '../../src/shared/codecs.js';
import { routeOf, type AppState } from '../../src/client/app.js';
import { registerDeliveryLog } from '../../src/client/webhooks/delivery-log-events.js';
import { registerWebhooks, webhooksOrgIdOf, type Webhook, type WebhookDelivery } from '../../src/client/webhooks/events.js';
import { webhooks } from '../../src/client/webhooks/feature.js';
import { answer, callOf, fakeClient } from '../support/client-events.js';

const ORG = '00000000-0000-4000-8000-000000000002';
const HOOK = '00000000-0000-4000-8000-0000000000bb';
const org = (role: string) => ({ id: ORG, name: 'Acme', slug: 'acme', personal: false, 'created-at': '2026-01-01T00:00:00.000Z', role });
const listed: Webhook = {
  id: HOOK,
  url: 'https://hooks.example.com/in',
  events: ['*'],
  description: '',
  enabled: true,
  'disabled-reason': null,
  'created-at': '2026-01-02T00:00:00.000Z',
};
const SECRET = 'whsec_MDEyMzQ1Njc4OWFiY2RlZmdoaWprbG1ub3BxcnN0dXY=';
const ROTATED = 'whsec_cm90YXRlZDAxMjM0NTY3ODlhYmNkZWZnaGlqa2xtbm8=';
const delivery = (n: number, status: WebhookDelivery['status'] = 'failed'): WebhookDelivery => ({
  id: `00000000-0000-4000-8000-0000000001${String(n).padStart(2, '0')}`,
  'message-id': `msg_${n}`,
  'event-type': 'member.updated',
  status,
  attempts: [{ at: '2026-01-03T00:00:00.000Z', 'status-code': 500, 'duration-ms': 12, error: 'unexpected-status', response: 'down' }],
  'next-attempt-at': null,
  'created-at': '2026-01-03T00:00:00.000Z',
});

function setup(role = 'admin') {
  let hooks: Webhook[] = [];
  const { core, requests, run } = fakeClient('org-webhooks', (req) => {
    const url = new URL(req.url, 'http://x');
    switch (callOf(req)) {
      case `GET /api/orgs/${ORG}`:
        return answer(org(role));
      case 'GET /api/webhooks/event-types':
        return answer({ 'event-types': ['member.updated', 'api-key.created', 'webhook.test'] });
      case `GET /api/orgs/${ORG}/webhooks`:
        return answer({ webhooks: hooks });
      case `POST /api/orgs/${ORG}/webhooks`: {
        const body = transitJson.decode(req.body!) as { url: string };
        if (body.url.includes('169.254')) {
          return answer(
            {
              type: 'request-coercion',
              message: 'Invalid request body',
              in: 'body',
              errors: [{ path: '/url', message: 'must not point to a link-local address' }],
            },
            400,
          );
        }
        hooks = [listed];
        return answer({ ...listed, secret: SECRET }, 201);
      }
      case `GET /api/orgs/${ORG}/webhooks/${HOOK}/secret`:
        return answer({ secret: SECRET });
      case `POST /api/orgs/${ORG}/webhooks/${HOOK}/rotate-secret`:
        return answer({ secret: ROTATED });
      case `POST /api/orgs/${ORG}/webhooks/${HOOK}/test`:
        return answer({ 'delivery-id': delivery(1).id }, 202);
      case `PATCH /api/orgs/${ORG}/webhooks/${HOOK}`:
        hooks = [{ ...listed, enabled: (transitJson.decode(req.body!) as { enabled: boolean }).enabled }];
        return answer(hooks[0]);
      case `DELETE /api/orgs/${ORG}/webhooks/${HOOK}`:
        hooks = [];
        return { status: 204, contentType: '', text: '' };
      case `GET /api/orgs/${ORG}/webhooks/${HOOK}/deliveries`:
        return url.searchParams.get('cursor')
          ? answer({ deliveries: [delivery(3)], 'next-cursor': null })
          : answer({ deliveries: [delivery(1), delivery(2, url.searchParams.get('status') === 'succeeded' ? 'succeeded' : 'failed')], 'next-cursor': 'c2' });
      case `POST /api/orgs/${ORG}/webhooks/${HOOK}/deliveries/${delivery(1).id}/retry`:
        return answer({ 'delivery-id': delivery(1).id }, 202);
      default:
        return undefined;
    }
  });
  registerWebhooks(core);
  registerDeliveryLog(core);
  return { core, requests, run, page: () => core.state.webhooksPage!, errors: () => core.state.fieldErrors?.['create-webhook'] };
}

describe('client webhook events', () => {
  it('routes /orgs/<id>/webhooks and reads the id', () => {
    assert.equal(routeOf(`/orgs/${ORG}/webhooks`), 'org-webhooks');
    assert.equal(webhooksOrgIdOf(`/orgs/${ORG}/webhooks`), ORG);
    assert.equal(webhooksOrgIdOf(`/orgs/${ORG}/api-keys`), undefined);
  });

  it('shows its navigation item for admins and owners of the current organization only', () => {
    const item = webhooks.nav!.find((n) => n.route === 'org-webhooks')!;
    assert.equal(item.section, 'org');
    const as = (role: 'owner' | 'admin' | 'member') =>
      ({ route: 'account', toasts: [], busy: false, ready: true, currentOrg: ORG, orgs: [{ ...org(role), role }] }) as unknown as AppState;
    assert.equal(item.path!(as('owner'), '/account'), `/orgs/${ORG}/webhooks`);
    assert.equal(item.path!(as('admin'), '/account'), `/orgs/${ORG}/webhooks`);
    assert.equal(item.path!(as('member'), '/account'), undefined);
  });

  it('loads nothing more for a member', async () => {
    const s = setup('member');
    await s.run(['webhooks/open', ORG]);
    assert.deepEqual(s.requests.map(callOf), [`GET /api/orgs/${ORG}`]);
  });

  it("creates an endpoint: a blank picker is refused here, the server's field errors go beside their fields, the secret is shown", async () => {
    const s = setup();
    await s.run(['webhooks/open', ORG]);
    assert.deepEqual(s.requests.map(callOf).sort(), [`GET /api/orgs/${ORG}`, `GET /api/orgs/${ORG}/webhooks`, 'GET /api/webhooks/event-types'].sort());
    assert.deepEqual(s.page().eventTypes, ['member.updated', 'api-key.created', 'webhook.test']);
    assert.deepEqual(s.page().webhooks, []);

    await s.run(['webhooks/create', { url: 'https://hooks.example.com/in', events: [] }]);
    assert.match(s.errors()?.events ?? '', /at least one/);
    assert.equal(s.requests.filter((r) => r.method.toUpperCase() === 'POST').length, 0);

    await s.run(['webhooks/create', { url: 'http://169.254.169.254/', events: ['*'] }]);
    assert.deepEqual(s.errors(), { url: 'must not point to a link-local address' });
    assert.equal(s.core.state.busy, false);

    await s.run(['webhooks/create', { url: ' https://hooks.example.com/in ', description: '  CRM  ', events: ['*'] }]);
    const posted = s.requests.filter((r) => r.method.toUpperCase() === 'POST').at(-1)!;
    assert.deepEqual(transitJson.decode(posted.body!), { url: 'https://hooks.example.com/in', events: ['*'], description: 'CRM' });
    assert.equal(s.errors(), undefined, 'the field errors went with the success');
    assert.equal(s.page().secrets[HOOK], SECRET);
    assert.equal(s.page().formResets, 1);
    assert.deepEqual(s.page().webhooks, [listed]);
  });

  it('reveals, hides and rotates secrets, and forgets them when the page is entered again', async () => {
    const s = setup();
    await s.run(['webhooks/open', ORG]);
    await s.run(['webhooks/reveal', HOOK]);
    assert.equal(s.page().secrets[HOOK], SECRET);
    await s.run(['webhooks/hide', HOOK]);
    assert.ok(!JSON.stringify(s.core.state).includes(SECRET));
    await s.run(['webhooks/rotate', HOOK]);
    assert.equal(s.page().secrets[HOOK], ROTATED);
    assert.match(s.core.state.toasts.at(-1)?.message ?? '', /24 hours/);
    await s.run(['webhooks/open', ORG]);
    assert.ok(!JSON.stringify(s.core.state).includes(ROTATED));
  });

  it("forgets a shown secret and the form's errors on leaving: entering again, or logging out", async () => {
    const s = setup();
    await s.run(['webhooks/open', ORG]);
    await s.run(['webhooks/create', { url: 'http://169.254.169.254/', events: ['*'] }]);
    assert.ok(s.errors()?.url);
    await s.run(['webhooks/open', ORG]);
    assert.equal(s.errors(), undefined);
    await s.run(['webhooks/reveal', HOOK]);
    assert.equal(s.page().secrets[HOOK], SECRET);
    await s.run(['auth/logged-out']);
    assert.equal(s.core.state.webhooksPage, undefined);
    assert.ok(!JSON.stringify(s.core.state).includes(SECRET));
  });

  it('sends a test and shows the log; filters, loads more, retries; enables and deletes', async () => {
    const s = setup();
    await s.run(['webhooks/create', { url: 'https://hooks.example.com/in', events: ['*'] }]);
    await s.run(['webhooks/open', ORG]);
    await s.run(['webhooks/test', HOOK]);
    assert.equal(s.core.state.toasts.at(-1)?.message, 'Test event sent');
    assert.equal(s.page().log?.webhookId, HOOK);
    assert.deepEqual(
      s.page().log?.items?.map((d) => d['message-id']),
      ['msg_1', 'msg_2'],
    );
    assert.equal(s.page().log?.nextCursor, 'c2');
    await s.run(['webhooks/more']);
    assert.deepEqual(
      s.page().log?.items?.map((d) => d['message-id']),
      ['msg_1', 'msg_2', 'msg_3'],
    );
    assert.equal(s.page().log?.nextCursor, null);
    await s.run(['webhooks/show-log', HOOK, 'succeeded']);
    const filtered = s.requests.filter((r) => callOf(r).endsWith('/deliveries')).at(-1)!;
    assert.equal(new URL(filtered.url, 'http://x').searchParams.get('status'), 'succeeded');
    assert.equal(s.page().log?.filter, 'succeeded');
    assert.equal(s.page().log?.items?.[1].status, 'succeeded');
    await s.run(['webhooks/retry', delivery(1).id]);
    assert.equal(s.core.state.toasts.at(-1)?.message, 'Retry sent');
    assert.ok(s.requests.some((r) => callOf(r) === `POST /api/orgs/${ORG}/webhooks/${HOOK}/deliveries/${delivery(1).id}/retry`));

    await s.run(['webhooks/set-enabled', HOOK, false]);
    assert.equal(s.page().webhooks?.[0].enabled, false);
    await s.run(['webhooks/delete', HOOK]);
    assert.deepEqual(s.page().webhooks, []);
    assert.equal(s.page().log, undefined, 'the log of a deleted endpoint goes');
  });
});

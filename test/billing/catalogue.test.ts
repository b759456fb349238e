/**
 * The plan catalogue (BILLING_PLANS_FILE): read and validated at start-up; each mistake stops it
 * with one line naming BILLING_PLANS_FILE and the field; BILLING_PLANS keeps working; both set
 * stops start-up naming both.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { billingModule } from '../../src/billing/module.js';
import { checkRouteData } from '../../src/billing/settings.js';
import type { Route, RouteGroup } from '../../src/http/routes.js';
import { LevelFilter } from '../../src/logging/filter.js';
import { LogBackend } from '../../src/logging/logger.js';
import { createRedactor } from '../../src/logging/redact.js';
import { ConfigError } from '../../src/config.js';
import { settingsOf } from '../support/settings.js';

const dir = mkdtempSync(join(tmpdir(), 'catalogue-'));
let n = 0;
function file(content: unknown): string {
  const path = join(dir, `plans-${n++}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

export const CATALOGUE = {
  meters: { 'api-calls': { name: 'API calls', 'event-name': 'api_calls' } },
  plans: [
    { id: 'free', name: 'Free', default: true, seats: { included: 3, max: 3 }, limits: { 'api-calls': { soft: 800, hard: 1000 } }, features: [] },
    {
      id: 'team',
      name: 'Team',
      prices: { flat: 'price_team_flat', 'per-seat': 'price_team_seat', metered: { 'api-calls': 'price_team_calls' }, former: ['price_team_2024'] },
      seats: { included: 5, max: 50 },
      limits: { 'api-calls': { soft: 80000, hard: 100000 } },
      features: ['usage-report'],
    },
  ],
};

const load = (env: Record<string, string>) => settingsOf(billingModule, { APP_ENV: 'test', ...env }).billing;

function refusal(content: unknown): string {
  try {
    load({ BILLING_PLANS_FILE: file(content) });
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    assert.equal(err.variable, 'BILLING_PLANS_FILE');
    assert.doesNotMatch(err.message, /\n/, 'one line');
    return err.message;
  }
  assert.fail(`${JSON.stringify(content)} is refused`);
}

const withPlan = (i: number, change: Record<string, unknown>) => ({
  ...CATALOGUE,
  plans: CATALOGUE.plans.map((p, j) => (j === i ? { ...p, ...change } : p)),
});

describe('the plan catalogue', () => {
  it('reads meters, plans, prices, seats, limits and features; every price names its plan', () => {
    const billing = load({ BILLING_PLANS_FILE: file(CATALOGUE) });
    assert.equal(billing.catalogue.source, 'file');
    assert.deepEqual(billing.catalogue.meters, [
      { id: 'api-calls', name: 'API calls', eventName: 'api_calls' },
      { id: 'storage-bytes', name: 'Storage (bytes)', eventName: 'storage_bytes' },
    ]);
    const [free, team] = billing.catalogue.plans;
    assert.deepEqual(free, {
      id: 'free',
      name: 'Free',
      default: true,
      prices: null,
      seats: { included: 3, max: 3 },
      limits: { 'api-calls': { soft: 800, hard: 1000 } },
      features: [],
      auditLogRetentionDays: 365,
    });
    assert.deepEqual(team.prices, {
      flat: 'price_team_flat',
      perSeat: 'price_team_seat',
      metered: { 'api-calls': 'price_team_calls' },
      former: ['price_team_2024'],
    });
    // checkout and the webhook read the priced plans: the main price, every other one counted as the plan
    assert.deepEqual(billing.plans, [{ id: 'team', priceId: 'price_team_flat', formerPriceIds: ['price_team_seat', 'price_team_calls', 'price_team_2024'] }]);
    // defaults: no seats key is 0 included and no cap
    const bare = load({ BILLING_PLANS_FILE: file({ plans: [{ id: 'pro', name: 'Pro', prices: { 'per-seat': 'price_p' } }] }) });
    assert.deepEqual(bare.catalogue.plans[0].seats, { included: 0, max: null });
    assert.deepEqual(
      bare.catalogue.meters.map((m) => m.id),
      ['api-calls', 'storage-bytes'],
      'the shipped meters are always there',
    );
  });

  it('stops start-up with one line naming the field of each mistake', () => {
    assert.match(refusal('{"plans": ['), /BILLING_PLANS_FILE is not valid JSON/);
    assert.match(refusal({ plans: [] }), /plans must be a non-empty array/);
    assert.match(refusal(withPlan(1, { seats: { included: 5, max: -1 } })), /plans\[1\]\.seats\.max must be an integer >= 5 or null, got -1/);
    assert.match(refusal(withPlan(0, { seats: { max: -1 } })), /plans\[0\]\.seats\.max must be an integer >= 1 or null, got -1/);
    assert.match(refusal(withPlan(1, { name: '' })), /plans\[1\]\.name must be 1\.\.60 characters/);
    assert.match(refusal(withPlan(1, { id: 'free' })), /plans\[1\]\.id must be unique/);
    assert.match(refusal(withPlan(1, { default: true, prices: undefined })), /plans\[1\]\.default may be true on one plan only/);
    assert.match(refusal(withPlan(0, { prices: { flat: 'price_x' } })), /plans\[0\]\.prices must be absent on the default plan/);
    assert.match(refusal(withPlan(1, { prices: undefined })), /plans\[1\]\.prices must list at least one price/);
    assert.match(
      refusal(withPlan(1, { prices: { flat: 'price_team_flat', former: ['price_team_flat'] } })),
      /plans\[1\]\.prices\.former\[0\] names a price already named/,
    );
    assert.match(refusal(withPlan(1, { limits: { 'api-calls': { soft: 10, hard: 5 } } })), /plans\[1\]\.limits\.api-calls\.soft must be <= hard/);
    assert.match(refusal(withPlan(1, { limits: { storage: { hard: 5 } } })), /plans\[1\]\.limits\.storage names a meter that is not in meters/);
    assert.match(refusal(withPlan(1, { features: ['Usage Report'] })), /plans\[1\]\.features\[0\] must be a feature id/);
    assert.match(refusal(withPlan(1, { colour: 'red' })), /plans\[1\]\.colour is not a known key/);
    assert.match(refusal(withPlan(0, { 'audit-log-retention-days': 0 })), /plans\[0\]\.audit-log-retention-days must be an integer >= 1, got 0/);
    assert.match(refusal(withPlan(1, { 'audit-log-retention-days': 'forever' })), /plans\[1\]\.audit-log-retention-days must be an integer >= 1/);
    assert.match(refusal({ ...CATALOGUE, meters: { 'api-calls': { unit: 'x' } } }), /meters\.api-calls\.unit is not a known key/);
    assert.throws(() => load({ BILLING_PLANS_FILE: join(dir, 'missing.json') }), /BILLING_PLANS_FILE names a file that cannot be read \(ENOENT\)/);
  });

  it('keeps BILLING_PLANS working, and refuses both set naming both', () => {
    const billing = load({ BILLING_PLANS: 'pro=price_pro|price_old' });
    assert.equal(billing.catalogue.source, 'env');
    assert.deepEqual(billing.catalogue.plans[0], {
      id: 'pro',
      name: 'pro',
      default: false,
      prices: { flat: 'price_pro', perSeat: null, metered: {}, former: ['price_old'] },
      seats: { included: 0, max: null },
      limits: {},
      features: [],
      auditLogRetentionDays: 365,
    });
    assert.throws(() => load({ BILLING_PLANS: 'pro=price_pro', BILLING_PLANS_FILE: file(CATALOGUE) }), /BILLING_PLANS_FILE and BILLING_PLANS are both set/);
    assert.throws(() => load({ BILLING_PRORATION: 'sometimes' }), /BILLING_PRORATION must be/);
    assert.throws(() => load({ BILLING_RETRY_SCHEDULE: '5,soon' }), /BILLING_RETRY_SCHEDULE must list/);
  });
});

describe('route data against the catalogue at start-up', () => {
  const group = (routes: Array<Partial<Route>>): RouteGroup => ({
    prefix: '/api/orgs',
    routes: routes.map((r) => ({ method: 'GET', path: '/:id/x', handler: () => null, ...r }) as Route),
  });
  const catalogue = {
    source: 'file',
    meters: [
      { id: 'api-calls', name: 'API calls', eventName: 'api_calls' },
      { id: 'exports', name: 'Exports', eventName: 'exports' },
    ],
    plans: [{ id: 'pro', features: ['sso'] }],
  } as never;
  const warnings: string[] = [];
  const log = new LogBackend(new LevelFilter([{ ns: '*', level: 'warn' }]), [{ write: (e) => warnings.push(`${e.id} ${e.msg}`) }], createRedactor()).logger(
    'saas.billing',
  );

  it("refuses a route limited by a meter the catalogue lacks, naming each (an API-key route's api-calls included)", () => {
    assert.doesNotThrow(() =>
      checkRouteData(
        [
          group([
            { limit: 'exports', orgRole: 'member' },
            { apiKeys: true, orgRole: 'member' },
          ]),
        ],
        catalogue,
        [],
        log,
      ),
    );
    assert.throws(
      () =>
        checkRouteData(
          [
            group([
              { path: '/:id/exports', limit: 'exports', orgRole: 'member' },
              { path: '/:id/reports', limit: 'reports', orgRole: 'member' },
            ]),
          ],
          catalogue,
          [],
          log,
        ),
      /GET \/api\/orgs\/:id\/reports \(limit "reports"\).*BILLING_PLANS_FILE's "meters"/,
    );
    const withoutApiCalls = { source: 'file', meters: [], plans: [] } as never;
    assert.throws(
      () => checkRouteData([group([{ path: '/:id/keys', apiKeys: true, orgRole: 'member' }])], withoutApiCalls, [], log),
      /\/:id\/keys \(limit "api-calls"\)/,
    );
  });

  it('says once per route that no plan of BILLING_PLANS_FILE has a feature a route requires (without the file, nothing)', () => {
    warnings.length = 0;
    checkRouteData(
      [
        group([
          { requires: { feature: 'sso' }, orgRole: 'admin' },
          { path: '/:id/audit-export', requires: { feature: 'audit-export' }, orgRole: 'admin' },
        ]),
      ],
      catalogue,
      [],
      log,
    );
    assert.deepEqual(warnings, [
      'billing/gated-feature-unknown GET /api/orgs/:id/audit-export needs the feature audit-export, which no plan of the catalogue has: no organization can open it',
    ]);
    warnings.length = 0;
    checkRouteData([group([{ requires: { feature: 'audit-export' }, orgRole: 'admin' }])], { source: 'env', meters: [], plans: [] } as never, [], log);
    assert.deepEqual(warnings, []);
    // a module's offer (billing.offer) to a plan of the catalogue gives that plan the feature; to a plan it lacks, nothing
    checkRouteData([group([{ requires: { feature: 'audit-export' }, orgRole: 'admin' }])], catalogue, [{ id: 'audit-export', plans: ['pro'] }], log);
    assert.deepEqual(warnings, []);
    checkRouteData([group([{ requires: { feature: 'audit-export' }, orgRole: 'admin' }])], catalogue, [{ id: 'audit-export', plans: ['team'] }], log);
    assert.equal(warnings.length, 1);
  });
});

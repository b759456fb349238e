/**
 * A local stand-in for Stripe's API, on 127.0.0.1, for the official `stripe` client the app
 * uses (STRIPE_API_URL points here). It answers the two calls billing makes in the shapes of
 * Stripe's API reference (a `checkout.session`, a `billing_portal.session`; errors as
 * `{error: {type, code, param, message}}` with a `Request-Id` header), records each request's
 * form parameters and headers, and keeps idempotency keys as Stripe does, for 24 hours and for the
 * whole account (not per path): the same key with the same request answers the first response
 * again; with other parameters or on another path, 400 `idempotency_error`. Meter event
 * identifiers are kept for `identifierTtlMs` (24 h): one seen before is 400 `duplicate_meter_event`.
 * One stand-in may serve several databases in turn, as one Stripe account outlives a database.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';

export interface StripeRequest {
  method: string;
  path: string;
  /** the form body, flattened as Stripe's encoding writes it (`line_items[0][price]`) */
  params: Record<string, string>;
  authorization: string | undefined;
  idempotencyKey: string | undefined;
  stripeVersion: string | undefined;
}

/** What the next requests get instead of a session. */
export type StripeFault =
  | { kind: 'error'; status: number; type: string; code?: string; param?: string; message: string }
  | { kind: 'drop' }
  /** the request is applied, then its connection is cut before the answer (nothing is kept for its idempotency key) */
  | { kind: 'lose-answer' };

export interface FakeStripe {
  url: string;
  requests: StripeRequest[];
  /** where a created checkout session sends the browser (default: a page on this server) */
  checkoutUrl: (params: Record<string, string>) => string;
  portalUrl: (params: Record<string, string>) => string;
  /** answered to every request until cleared */
  fault: StripeFault | undefined;
  sessionsCreated: number;
  /** the prices GET /v1/prices/:id knows (others: 404 resource_missing); each with its product's name */
  prices: Record<string, { product: string; unitAmount: number | null; currency: string; interval?: 'month' | 'year'; nickname?: string }>;
  /** what GET /v1/subscriptions/:id answers (others: 404 resource_missing) */
  subscriptions: Record<string, Record<string, unknown>>;
  /** the subscriptions canceled through DELETE /v1/subscriptions/:id (ids starting `sub_gone` answer 404 resource_missing) */
  canceled: string[];
  /** quantities set through POST /v1/subscription_items/:id, in order (a replayed idempotent request is not applied again) */
  itemUpdates: Array<{ item: string; quantity: number; proration: string | undefined; key: string | undefined }>;
  /** meter events taken by POST /v1/billing/meter_events (an identifier seen before: 400 duplicate_meter_event) */
  meterEvents: Array<{ eventName: string; customer: string; value: number; identifier: string; timestamp: number }>;
  /** added to the clock that ages idempotency keys and meter identifiers (a test moves time on) */
  clockOffsetMs: number;
  /** how long a meter identifier is refused again (Stripe: at least 24 h) */
  identifierTtlMs: number;
  close(): Promise<void>;
}

const id = (prefix: string) => `${prefix}_test_${randomBytes(12).toString('hex')}`;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** How long Stripe keeps an idempotency key. */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

export async function startFakeStripe(): Promise<FakeStripe> {
  const idempotent = new Map<string, { request: string; status: number; response: string; at: number }>();
  const identifiers = new Map<string, number>();
  let server: Server;
  const fake: FakeStripe = {
    url: '',
    requests: [],
    checkoutUrl: () => `${fake.url}/pay/checkout`,
    portalUrl: () => `${fake.url}/pay/portal`,
    fault: undefined,
    sessionsCreated: 0,
    prices: {
      price_pro_2024: { product: 'Pro', unitAmount: 1200, currency: 'usd', interval: 'month' },
      price_team_2024: { product: 'Team', unitAmount: 4900, currency: 'usd', interval: 'month' },
    },
    subscriptions: {},
    canceled: [],
    itemUpdates: [],
    meterEvents: [],
    clockOffsetMs: 0,
    identifierTtlMs: IDEMPOTENCY_TTL_MS,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  server = createServer(async (req, res) => {
    const body = await readBody(req);
    const path = (req.url ?? '/').split('?')[0];
    const params = Object.fromEntries(new URLSearchParams(body));
    const header = (name: string) => (typeof req.headers[name] === 'string' ? (req.headers[name] as string) : undefined);
    const recorded: StripeRequest = {
      method: req.method ?? '',
      path,
      params,
      authorization: header('authorization'),
      idempotencyKey: header('idempotency-key'),
      stripeVersion: header('stripe-version'),
    };
    fake.requests.push(recorded);
    const requestId = id('req');
    const fault = fake.fault;
    const send = (status: number, json: string) => {
      if (fault?.kind === 'lose-answer') {
        req.socket.destroy();
        return;
      }
      res.writeHead(status, { 'content-type': 'application/json', 'request-id': requestId, 'stripe-should-retry': 'false' });
      res.end(json);
    };
    if (fault?.kind === 'drop') {
      req.socket.destroy();
      return;
    }
    if (fault?.kind === 'error') {
      send(fault.status, JSON.stringify({ error: { type: fault.type, code: fault.code, param: fault.param, message: fault.message } }));
      return;
    }
    if (recorded.authorization !== 'Bearer sk_test_billing0123456789') {
      send(
        401,
        JSON.stringify({ error: { type: 'invalid_request_error', message: `Invalid API Key provided: ${String(recorded.authorization).slice(7, 15)}****` } }),
      );
      return;
    }
    const now = Date.now() + fake.clockOffsetMs;
    const key = recorded.idempotencyKey;
    const request = `${req.method} ${path} ${body}`;
    const kept = key ? idempotent.get(key) : undefined;
    const seen = kept && now - kept.at < IDEMPOTENCY_TTL_MS ? kept : undefined;
    if (seen) {
      if (seen.request !== request) {
        send(
          400,
          JSON.stringify({
            error: { type: 'idempotency_error', message: 'Keys for idempotent requests can only be used with the same parameters they were first used with.' },
          }),
        );
      } else {
        res.writeHead(seen.status, { 'content-type': 'application/json', 'request-id': requestId, 'idempotent-replayed': 'true' });
        res.end(seen.response);
      }
      return;
    }
    let response: Record<string, unknown>;
    if (req.method === 'POST' && path === '/v1/checkout/sessions') {
      fake.sessionsCreated++;
      response = {
        id: id('cs'),
        object: 'checkout.session',
        mode: params.mode,
        status: 'open',
        livemode: false,
        client_reference_id: params.client_reference_id ?? null,
        customer: params.customer ?? null,
        customer_email: params.customer_email ?? null,
        success_url: params.success_url,
        cancel_url: params.cancel_url,
        subscription: null,
        url: fake.checkoutUrl(params),
        created: Math.floor(Date.now() / 1000),
        expires_at: Math.floor(Date.now() / 1000) + 86400,
      };
    } else if (req.method === 'POST' && path === '/v1/billing_portal/sessions') {
      response = {
        id: id('bps'),
        object: 'billing_portal.session',
        customer: params.customer,
        return_url: params.return_url ?? null,
        livemode: false,
        created: Math.floor(Date.now() / 1000),
        url: fake.portalUrl(params),
      };
    } else if (req.method === 'GET' && /^\/v1\/prices\/[A-Za-z0-9_]+$/.test(path)) {
      const priceId = path.split('/')[3];
      const price = fake.prices[priceId];
      if (!price) {
        send(
          404,
          JSON.stringify({ error: { type: 'invalid_request_error', code: 'resource_missing', param: 'price', message: `No such price: '${priceId}'` } }),
        );
        return;
      }
      const expanded = new URLSearchParams((req.url ?? '').split('?')[1] ?? '').get('expand[0]') === 'product';
      const product = { id: `prod_${priceId}`, object: 'product', name: price.product, active: true };
      response = {
        id: priceId,
        object: 'price',
        active: true,
        currency: price.currency,
        unit_amount: price.unitAmount,
        nickname: price.nickname ?? null,
        product: expanded ? product : product.id,
        type: price.interval ? 'recurring' : 'one_time',
        livemode: false,
        recurring: price.interval ? { interval: price.interval, interval_count: 1, usage_type: 'licensed' } : null,
      };
    } else if (req.method === 'GET' && /^\/v1\/subscriptions\/[A-Za-z0-9_]+$/.test(path)) {
      const subscriptionId = path.split('/')[3];
      const subscription = fake.subscriptions[subscriptionId];
      if (!subscription) {
        send(
          404,
          JSON.stringify({
            error: { type: 'invalid_request_error', code: 'resource_missing', param: 'id', message: `No such subscription: '${subscriptionId}'` },
          }),
        );
        return;
      }
      response = subscription;
    } else if (req.method === 'POST' && /^\/v1\/subscription_items\/[A-Za-z0-9_]+$/.test(path)) {
      const itemId = path.split('/')[3];
      fake.itemUpdates.push({ item: itemId, quantity: Number(params.quantity), proration: params.proration_behavior, key });
      response = { id: itemId, object: 'subscription_item', quantity: Number(params.quantity) };
    } else if (req.method === 'POST' && path === '/v1/billing/meter_events') {
      const identifier = params.identifier;
      const seenAt = identifiers.get(identifier);
      if (seenAt !== undefined && now - seenAt < fake.identifierTtlMs) {
        send(
          400,
          JSON.stringify({
            error: { type: 'invalid_request_error', code: 'duplicate_meter_event', message: `An event with identifier ${identifier} already exists` },
          }),
        );
        return;
      }
      identifiers.set(identifier, now);
      fake.meterEvents.push({
        eventName: params.event_name,
        customer: params['payload[stripe_customer_id]'],
        value: Number(params['payload[value]']),
        identifier,
        timestamp: Number(params.timestamp),
      });
      response = { object: 'billing.meter_event', event_name: params.event_name, identifier, livemode: false, created: Math.floor(Date.now() / 1000) };
    } else if (req.method === 'DELETE' && /^\/v1\/subscriptions\/[A-Za-z0-9_]+$/.test(path)) {
      const subscriptionId = path.split('/')[3];
      if (subscriptionId.startsWith('sub_gone')) {
        send(
          404,
          JSON.stringify({
            error: { type: 'invalid_request_error', code: 'resource_missing', param: 'id', message: `No such subscription: '${subscriptionId}'` },
          }),
        );
        return;
      }
      fake.canceled.push(subscriptionId);
      response = { id: subscriptionId, object: 'subscription', status: 'canceled', canceled_at: Math.floor(Date.now() / 1000) };
    } else {
      send(404, JSON.stringify({ error: { type: 'invalid_request_error', message: `Unrecognized request URL (${req.method}: ${path}).` } }));
      return;
    }
    const text = JSON.stringify(response);
    if (key && fault?.kind !== 'lose-answer') idempotent.set(key, { request, status: 200, response: text, at: now });
    send(200, text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return fake;
}

export const TEST_STRIPE_KEY = 'sk_test_billing0123456789';

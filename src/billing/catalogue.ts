/**
 * The plan catalogue (docs/billing.md, "The catalogue"): BILLING_PLANS_FILE, a JSON file of meters
 * and plans with their prices, seats, limits and features, read and validated at start-up. Every
 * mistake stops start-up with one line naming BILLING_PLANS_FILE and the field
 * (`plans[2].seats.max must be …, got -1`).
 */
import { readFileSync } from 'node:fs';

/** What config.ts throws: a bad variable and what is wrong with it. */
export type ConfigProblem = (variable: string, problem: string) => Error;

export interface Meter {
  id: string;
  name: string;
  /** the Stripe meter's event name */
  eventName: string;
}

export interface PlanPrices {
  flat: string | null;
  perSeat: string | null;
  /** meter id → metered price */
  metered: Record<string, string>;
  /** older prices still counted as this plan */
  former: string[];
}

export interface PlanLimit {
  soft: number | null;
  hard: number | null;
}

export interface CataloguePlan {
  id: string;
  name: string;
  default: boolean;
  /** null for the default plan */
  prices: PlanPrices | null;
  seats: { included: number; max: number | null };
  limits: Record<string, PlanLimit>;
  features: string[];
  /** how long the organization's audit log entries are kept (`audit-log-retention-days`, default 365; src/audit-streams/retention.ts) */
  auditLogRetentionDays: number;
}

/** An organization's audit log is kept this many days when its plan says nothing (or it has none). */
export const DEFAULT_AUDIT_LOG_RETENTION_DAYS = 365;

export interface Catalogue {
  /** `file`: BILLING_PLANS_FILE; `env`: BILLING_PLANS, each plan one flat price */
  source: 'file' | 'env';
  meters: Meter[];
  plans: CataloguePlan[];
}

/** The meter the project ships: each request made with an organization's API key counts 1. */
export const API_CALLS_METER: Meter = { id: 'api-calls', name: 'API calls', eventName: 'api_calls' };
/** The files' meter (src/storage/): the bytes an organization's files hold now; limits, never billed per use. */
export const STORAGE_BYTES_METER: Meter = { id: 'storage-bytes', name: 'Storage (bytes)', eventName: 'storage_bytes' };

const ID = /^[a-z0-9][a-z0-9-]{0,49}$/;
const FEATURE = /^[a-z0-9][a-z0-9-]*$/;
const PRICE_ID = /^[A-Za-z0-9_-]{1,255}$/;
const EVENT_NAME = /^[A-Za-z0-9_.:-]{1,100}$/;
const VARIABLE = 'BILLING_PLANS_FILE';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const show = (v: unknown): string => {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
};

class Reader {
  constructor(private readonly problem: ConfigProblem) {}

  fail(field: string, what: string, ...got: [unknown?]): never {
    throw this.problem(VARIABLE, `${field} ${what}${got.length > 0 ? `, got ${show(got[0])}` : ''}`);
  }

  object(field: string, value: unknown, keys: readonly string[]): Obj {
    if (!isObj(value)) this.fail(field, 'must be an object', value);
    for (const key of Object.keys(value)) {
      if (!keys.includes(key)) this.fail(`${field}.${key}`, `is not a known key (known: ${keys.join(', ')})`);
    }
    return value;
  }

  int(field: string, value: unknown, min: number): number {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) this.fail(field, `must be an integer >= ${min}`, value);
    return value;
  }

  text(field: string, value: unknown, pattern: RegExp, what: string): string {
    if (typeof value !== 'string' || !pattern.test(value)) this.fail(field, `must be ${what}`, value);
    return value;
  }
}

/** Reads and validates the catalogue file at `path`. */
export function readCatalogue(path: string, problem: ConfigProblem): Catalogue {
  let raw: string;
  try {
    raw = readFileSync(path, 'utf8');
  } catch (err) {
    throw problem(VARIABLE, `names a file that cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (err) {
    throw problem(VARIABLE, `is not valid JSON: ${(err as Error).message}`);
  }
  return parseCatalogue(json, problem);
}

export function parseCatalogue(json: unknown, problem: ConfigProblem): Catalogue {
  const r: Reader = new Reader(problem);
  const top = r.object('the file', json, ['meters', 'plans']);
  const meters = readMeters(r, top.meters);
  if (!Array.isArray(top.plans) || top.plans.length === 0) r.fail('plans', 'must be a non-empty array', top.plans);
  const seenPrices = new Set<string>();
  const plans: CataloguePlan[] = top.plans.map((value, i) => readPlan(r, `plans[${i}]`, value, meters, seenPrices));
  const ids = new Set<string>();
  plans.forEach((p, i) => {
    if (ids.has(p.id)) r.fail(`plans[${i}].id`, 'must be unique', p.id);
    ids.add(p.id);
  });
  const defaults = plans.filter((p) => p.default);
  if (defaults.length > 1) r.fail(`plans[${plans.lastIndexOf(defaults[1])}].default`, 'may be true on one plan only', true);
  return { source: 'file', meters, plans };
}

function readMeters(r: Reader, value: unknown): Meter[] {
  const meters: Meter[] = [];
  if (value !== undefined) {
    if (!isObj(value)) r.fail('meters', 'must be an object of meter id to {name, event-name}', value);
    for (const [id, spec] of Object.entries(value)) {
      const field = `meters.${id}`;
      if (!ID.test(id)) r.fail(field, 'must be named like a plan id (lower-case letters, digits, hyphens)');
      const m = r.object(field, spec, ['name', 'event-name']);
      const name = m.name === undefined ? id : r.text(`${field}.name`, m.name, /^.{1,60}$/su, '1..60 characters');
      const eventName = m['event-name'] === undefined ? id : r.text(`${field}.event-name`, m['event-name'], EVENT_NAME, 'a Stripe meter event name');
      meters.push({ id, name, eventName });
    }
  }
  // the shipped meter is always there; the file may rename it
  if (!meters.some((m) => m.id === API_CALLS_METER.id)) meters.unshift(API_CALLS_METER);
  if (!meters.some((m) => m.id === STORAGE_BYTES_METER.id)) meters.push(STORAGE_BYTES_METER);
  return meters;
}

function readPlan(r: Reader, field: string, value: unknown, meters: Meter[], seenPrices: Set<string>): CataloguePlan {
  const p = r.object(field, value, ['id', 'name', 'default', 'prices', 'seats', 'limits', 'features', 'audit-log-retention-days']);
  const id = r.text(`${field}.id`, p.id, ID, 'a plan id (lower-case letters, digits and hyphens, at most 50)');
  const name = r.text(`${field}.name`, p.name, /^.{1,60}$/su, '1..60 characters');
  if (p.default !== undefined && typeof p.default !== 'boolean') r.fail(`${field}.default`, 'must be true or false', p.default);
  const isDefault = p.default === true;
  let prices: PlanPrices | null = null;
  if (isDefault) {
    if (p.prices !== undefined) r.fail(`${field}.prices`, 'must be absent on the default plan (it is what organizations without a subscription have)');
  } else {
    prices = readPrices(r, `${field}.prices`, p.prices, meters, seenPrices);
  }
  const s = p.seats === undefined ? {} : r.object(`${field}.seats`, p.seats, ['included', 'max']);
  const included = s.included === undefined ? 0 : r.int(`${field}.seats.included`, s.included, 0);
  const floor = Math.max(1, included);
  let max: number | null = null;
  if (s.max !== undefined && s.max !== null) {
    if (typeof s.max !== 'number' || !Number.isSafeInteger(s.max) || s.max < floor)
      r.fail(`${field}.seats.max`, `must be an integer >= ${floor} or null`, s.max);
    max = s.max;
  }
  const limits: Record<string, PlanLimit> = {};
  if (p.limits !== undefined) {
    if (!isObj(p.limits)) r.fail(`${field}.limits`, 'must be an object of meter id to {soft, hard}', p.limits);
    for (const [meter, spec] of Object.entries(p.limits)) {
      const at = `${field}.limits.${meter}`;
      if (!meters.some((m) => m.id === meter)) r.fail(at, 'names a meter that is not in meters');
      const l = r.object(at, spec, ['soft', 'hard']);
      const soft = l.soft === undefined ? null : r.int(`${at}.soft`, l.soft, 1);
      const hard = l.hard === undefined ? null : r.int(`${at}.hard`, l.hard, 1);
      if (soft !== null && hard !== null && soft > hard) r.fail(`${at}.soft`, `must be <= hard (${hard})`, soft);
      limits[meter] = { soft, hard };
    }
  }
  let features: string[] = [];
  if (p.features !== undefined) {
    if (!Array.isArray(p.features)) r.fail(`${field}.features`, 'must be an array of feature ids', p.features);
    features = p.features.map((f, i) => r.text(`${field}.features[${i}]`, f, FEATURE, 'a feature id (^[a-z0-9][a-z0-9-]*$)'));
  }
  const auditLogRetentionDays =
    p['audit-log-retention-days'] === undefined
      ? DEFAULT_AUDIT_LOG_RETENTION_DAYS
      : r.int(`${field}.audit-log-retention-days`, p['audit-log-retention-days'], 1);
  return { id, name, default: isDefault, prices, seats: { included, max }, limits, features, auditLogRetentionDays };
}

function readPrices(r: Reader, field: string, value: unknown, meters: Meter[], seen: Set<string>): PlanPrices {
  if (value === undefined) r.fail(field, 'must list at least one price (flat, per-seat or metered) on a plan that is not the default');
  const p = r.object(field, value, ['flat', 'per-seat', 'metered', 'former']);
  const price = (at: string, v: unknown): string => {
    const id = r.text(at, v, PRICE_ID, 'a Stripe price id (such as price_123)');
    if (seen.has(id)) r.fail(at, 'names a price already named in the file: a price belongs to one plan', id);
    seen.add(id);
    return id;
  };
  const flat = p.flat === undefined || p.flat === null ? null : price(`${field}.flat`, p.flat);
  const perSeat = p['per-seat'] === undefined || p['per-seat'] === null ? null : price(`${field}.per-seat`, p['per-seat']);
  const metered: Record<string, string> = {};
  if (p.metered !== undefined && p.metered !== null) {
    if (!isObj(p.metered)) r.fail(`${field}.metered`, 'must be an object of meter id to price id', p.metered);
    for (const [meter, v] of Object.entries(p.metered)) {
      if (!meters.some((m) => m.id === meter)) r.fail(`${field}.metered.${meter}`, 'names a meter that is not in meters');
      metered[meter] = price(`${field}.metered.${meter}`, v);
    }
  }
  let former: string[] = [];
  if (p.former !== undefined) {
    if (!Array.isArray(p.former)) r.fail(`${field}.former`, 'must be an array of price ids', p.former);
    former = p.former.map((v, i) => price(`${field}.former[${i}]`, v));
  }
  if (!flat && !perSeat && Object.keys(metered).length === 0) r.fail(field, 'must have a flat, per-seat or metered price');
  return { flat, perSeat, metered, former };
}

/** Every price of a plan that makes a subscription this plan (current and former). */
export function pricesOf(plan: CataloguePlan): string[] {
  const p = plan.prices;
  if (!p) return [];
  return [p.flat, p.perSeat, ...Object.values(p.metered), ...p.former].filter((x): x is string => x !== null);
}

/** The price `price-id` shows and BILLING_PLANS-era code reads: flat, else per-seat, else the first metered one. */
export function mainPrice(plan: CataloguePlan): string | null {
  const p = plan.prices;
  return p ? (p.flat ?? p.perSeat ?? Object.values(p.metered)[0] ?? null) : null;
}

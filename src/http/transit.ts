/**
 * Transit-over-JSON for the API's data. Writing is done here: plain data maps straight onto
 * Transit's JSON forms (maps as `["^ ", k, v, ...]`, keyword keys `~:k`, the key cache `^0`,
 * escaped strings), then `JSON.stringify` does the rest; transit-js's writer measured 7.8x
 * JSON's time, most of it spent wrapping every key in a Keyword object. Reading uses
 * transit-js's reader with a builder that makes plain objects directly. The tests check both
 * against transit-js on generated data.
 */
import transit from 'transit-js';

const MAX_CACHE_ENTRIES = 44 * 44;
const BASE = 48;

function cacheCode(index: number): string {
  const hi = Math.floor(index / 44);
  const lo = String.fromCharCode((index % 44) + BASE);
  return hi === 0 ? `^${lo}` : `^${String.fromCharCode(hi + BASE)}${lo}`;
}

function escapeString(s: string): string {
  const c = s.charCodeAt(0);
  // ~ ^ ` start Transit's encoded values: a string that starts with one is escaped with ~
  return c === 126 || c === 94 || c === 96 ? `~${s}` : s;
}

function encodeNumber(v: number): unknown {
  if (Number.isNaN(v)) return '~zNaN';
  if (v === Infinity) return '~zINF';
  if (v === -Infinity) return '~z-INF';
  return v;
}

/** Writes plain data as Transit JSON, map keys as keywords, with Transit's key cache. */
export function writeTransit(value: unknown): string {
  const cache = new Map<string, string>();
  let next = 0;
  // map keys longer than 3 characters (with their `~:`) are cached: first use writes the
  // key, later uses its code, as transit-js's reader expects
  const key = (name: string): string => {
    const encoded = `~:${name}`;
    if (encoded.length <= 3) return encoded;
    const hit = cache.get(encoded);
    if (hit !== undefined) return hit;
    if (next === MAX_CACHE_ENTRIES) {
      cache.clear();
      next = 0;
    }
    cache.set(encoded, cacheCode(next++));
    return encoded;
  };
  const encode = (v: unknown): unknown => {
    if (v === null || v === undefined) return null;
    switch (typeof v) {
      case 'string': return escapeString(v);
      case 'number': return encodeNumber(v);
      case 'boolean': return v;
      case 'bigint': return `~n${v}`;
    }
    if (Array.isArray(v)) return v.map(encode);
    if (v instanceof Date) return escapeString(v.toISOString());
    if (typeof v === 'object') {
      const out: unknown[] = ['^ '];
      for (const k in v) {
        const item = (v as Record<string, unknown>)[k];
        if (item === undefined) continue;
        out.push(key(k), encode(item));
      }
      return out;
    }
    return escapeString(String(v));
  };
  const top = encode(value);
  // a scalar at the top level is wrapped in the quote tag
  return JSON.stringify(top !== null && typeof top === 'object' ? top : ['~#\'', top]);
}

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export class TransitShapeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TransitShapeError';
  }
}

const reader = transit.reader('json', {
  mapBuilder: {
    init: () => ({}),
    add: (m: Record<string, unknown>, k: unknown, v: unknown) => {
      if (typeof k !== 'string' && typeof k !== 'number') throw new TransitShapeError('Transit map keys must be keywords or strings');
      const name = String(k);
      if (FORBIDDEN_KEYS.has(name)) throw new TransitShapeError(`Forbidden key "${name}"`);
      m[name] = v;
      return m;
    },
    finalize: (m: Record<string, unknown>) => m,
  },
  arrayBuilder: {
    init: () => [],
    add: (a: unknown[], v: unknown) => { a.push(v); return a; },
    finalize: (a: unknown[]) => a,
  },
  handlers: {
    ':': (rep: string) => rep, // keyword -> its name
    $: (rep: string) => rep, // symbol -> its name
    u: (rep: unknown) => (typeof rep === 'string' ? rep : String(transit.uuid(rep as string))),
    m: (rep: string | number) => new Date(Number(rep)).toISOString(),
    t: (rep: string) => new Date(rep).toISOString(),
    set: (rep: unknown[]) => rep,
    list: (rep: unknown[]) => rep,
    cmap: (rep: unknown[]) => {
      const out: Record<string, unknown> = {};
      for (let i = 0; i < rep.length; i += 2) {
        const k = rep[i];
        if (typeof k !== 'string' && typeof k !== 'number') throw new TransitShapeError('Transit map keys must be keywords or strings');
        if (FORBIDDEN_KEYS.has(String(k))) throw new TransitShapeError(`Forbidden key "${String(k)}"`);
        out[String(k)] = rep[i + 1];
      }
      return out;
    },
  } as never,
} as never);

/** Reads Transit JSON into plain data. */
export function readTransit(text: string): unknown {
  try {
    return normalize(reader.read(text));
  } finally {
    // transit-js clears its key cache only after a read that succeeds: a read that throws
    // (a forbidden key, a broken cache code) would leave it to the next read, which would then
    // decode its cache codes into the previous input's keys
    (reader as unknown as { cache: { clear(): void } }).cache.clear();
  }
}

// values transit-js still returns as its own types (big integers, decimals, unknown tags)
function normalize(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) { const x = v[i]; if (x !== null && typeof x === 'object') v[i] = normalize(x); }
    return v;
  }
  // big integers read as the nearest double, as JSON.parse reads them
  if (transit.isInteger(v)) return Number(String(v));
  if (transit.isBigDec(v)) return Number((v as { rep: string }).rep);
  if (transit.isTaggedValue(v)) {
    const rep = (v as { rep: unknown }).rep;
    return typeof rep === 'object' ? normalize(rep) : rep;
  }
  if (Object.getPrototypeOf(v) === Object.prototype) {
    const obj = v as Record<string, unknown>;
    for (const k in obj) { const x = obj[k]; if (x !== null && typeof x === 'object') obj[k] = normalize(x); }
    return obj;
  }
  throw new TransitShapeError('Unsupported Transit value');
}

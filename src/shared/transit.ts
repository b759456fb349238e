/**
 * Transit-over-JSON for the API's data. Writing is done here: plain data maps straight onto
 * Transit's JSON forms (maps as `["^ ", k, v, ...]`, keyword keys `~:k`, the key cache `^0`,
 * escaped strings), then `JSON.stringify` does the rest; transit-js's writer measured 7.8x
 * JSON's time, most of it spent wrapping every key in a Keyword object. Reading is also done
 * here, on top of JSON.parse: transit-js's reader is most of the browser client's size, and
 * kept its key cache from a failed read for the next one. The tests check both directions
 * against transit-js on generated data.
 */

import { FORBIDDEN_KEYS } from './forbidden-keys.js';
import { boundedMemo } from './memo.js';

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

// `~:name` for each key name
const keyword = boundedMemo((name) => `~:${name}`);

/** Writes plain data as Transit JSON, map keys as keywords, with Transit's key cache. */
export function writeTransit(value: unknown): string {
  // per write, by key name: the cache codes of this document
  const cache = new Map<string, string>();
  let next = 0;
  // map keys longer than 3 characters (with their `~:`) are cached: first use writes the
  // key, later uses its code, as transit-js's reader expects
  const key = (name: string): string => {
    if (name.length <= 1) return keyword(name);
    const hit = cache.get(name);
    if (hit !== undefined) return hit;
    if (next === MAX_CACHE_ENTRIES) {
      cache.clear();
      next = 0;
    }
    cache.set(name, cacheCode(next++));
    return keyword(name);
  };
  const encode = (v: unknown): unknown => {
    if (v === null || v === undefined) return null;
    switch (typeof v) {
      case 'string':
        return escapeString(v);
      case 'number':
        return encodeNumber(v);
      case 'boolean':
        return v;
      case 'bigint':
        return `~n${v}`;
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
  return JSON.stringify(top !== null && typeof top === 'object' ? top : ["~#'", top]);
}

export class TransitShapeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TransitShapeError';
  }
}

/** A tag (`~#set`) as it sits in the read cache: distinct from any string value. */
class Tag {
  constructor(readonly name: string) {}
}

function isCacheCode(s: string): boolean {
  return s.charCodeAt(0) === 94 && s !== '^ ' && (s.length === 2 || s.length === 3);
}

function cacheIndex(code: string): number {
  return code.length === 2 ? code.charCodeAt(1) - BASE : (code.charCodeAt(1) - BASE) * 44 + (code.charCodeAt(2) - BASE);
}

function decodeScalarString(s: string): unknown {
  if (s.charCodeAt(0) !== 126 || s.length < 2) return s; // not ~-encoded
  const rest = s.slice(2);
  switch (s[1]) {
    case '~':
    case '^':
    case '`':
      return s.slice(1); // escaped
    case ':':
    case '$':
      return rest; // keyword, symbol: their names
    case '#':
      return new Tag(rest);
    case 'i':
    case 'n':
    case 'd':
    case 'f':
      return Number(rest); // big ints read as the nearest double, as JSON.parse does
    case 'z':
      return rest === 'NaN' ? NaN : rest === 'INF' ? Infinity : rest === '-INF' ? -Infinity : fail('bad special number');
    case 'm':
      return new Date(Number(rest)).toISOString();
    case 't':
      return new Date(rest).toISOString();
    case '?':
      return rest === 't';
    case '_':
      return null;
    default:
      return rest; // u (uuid), r (uri), c (char), b (bytes) and unknown scalar tags: their text
  }
}

function fail(message: string): never {
  throw new TransitShapeError(message);
}

/**
 * Reads Transit JSON into plain data: maps to objects, keywords and symbols to their names,
 * sets and lists to arrays, dates to ISO strings, UUIDs and URIs to strings. The key cache is
 * the read's own, so nothing carries over from one read to the next.
 */
export function readTransit(text: string): unknown {
  const root: unknown = JSON.parse(text);
  const cache: unknown[] = [];
  let next = 0;

  const remember = (value: unknown): unknown => {
    if (next === MAX_CACHE_ENTRIES) next = 0;
    cache[next++] = value;
    return value;
  };

  const str = (s: string, asKey: boolean): unknown => {
    if (isCacheCode(s)) {
      const index = cacheIndex(s);
      if (!(index in cache)) fail('unknown cache code');
      return cache[index];
    }
    const value = decodeScalarString(s);
    if (s.length > 3 && (asKey || (s.charCodeAt(0) === 126 && (s[1] === ':' || s[1] === '$' || s[1] === '#')))) remember(value);
    return value;
  };

  const key = (raw: unknown): string => {
    const k = typeof raw === 'string' ? str(raw, true) : decode(raw);
    if (typeof k !== 'string' && typeof k !== 'number') fail('map keys must be keywords, strings or numbers');
    const name = String(k);
    if (FORBIDDEN_KEYS.has(name)) fail(`forbidden key "${name}"`);
    return name;
  };

  const pairs = (items: unknown[], from: number, keyOf: (raw: unknown) => string): Record<string, unknown> => {
    if ((items.length - from) % 2) fail('map with an odd number of entries');
    const out: Record<string, unknown> = {};
    for (let i = from; i < items.length; i += 2) {
      const k = keyOf(items[i]);
      out[k] = decode(items[i + 1]);
    }
    return out;
  };

  const tagged = (tag: string, rep: unknown): unknown => {
    switch (tag) {
      case 'cmap': {
        if (!Array.isArray(rep)) fail('cmap needs an array');
        return pairs(rep, 0, (raw) => {
          const k = decode(raw);
          if (typeof k !== 'string' && typeof k !== 'number') fail('map keys must be keywords, strings or numbers');
          if (FORBIDDEN_KEYS.has(String(k))) fail(`forbidden key "${String(k)}"`);
          return String(k);
        });
      }
      case 'u': {
        if (Array.isArray(rep)) fail('UUIDs as two longs are not supported');
        return decode(rep);
      }
      default: {
        const value = decode(rep);
        if (tag === 'm') return new Date(Number(value)).toISOString();
        if (tag === 't') return new Date(String(value)).toISOString();
        return value; // ', set, list, and tags we do not know: their representation
      }
    }
  };

  const decode = (node: unknown): unknown => {
    if (typeof node === 'string') return str(node, false);
    if (Array.isArray(node)) {
      if (node.length === 0) return node;
      if (node[0] === '^ ') return pairs(node, 1, key);
      if (node.length === 2 && typeof node[0] === 'string') {
        const head = str(node[0], false);
        if (head instanceof Tag) return tagged(head.name, node[1]);
        return [head, decode(node[1])];
      }
      return node.map(decode);
    }
    if (node !== null && typeof node === 'object') {
      const entries = Object.entries(node);
      // verbose form: a tagged value is a one-entry map whose key is a tag
      if (entries.length === 1 && entries[0][0].startsWith('~#')) {
        const head = str(entries[0][0], true);
        if (head instanceof Tag) return tagged(head.name, entries[0][1]);
      }
      const out: Record<string, unknown> = {};
      for (const [k, v] of entries) out[key(k)] = decode(v);
      return out;
    }
    return node;
  };

  const value = decode(root);
  if (value instanceof Tag) fail('a tag without a value');
  return value;
}

/**
 * Body codecs shared by the server and the browser client: JSON, EDN and Transit-over-JSON. Inside the app every body is plain data
 * with kebab-case string keys; EDN and Transit write every map key as a keyword
 * (`:access-token`) and read keywords back as their names (`:account/me` -> "account/me").
 */
import { parseEDNString, toEDNStringFromSimpleObject } from 'edn-data';
import transit from 'transit-js';
import { ednStructureProblem } from './edn-check.js';

export interface Format {
  name: 'json' | 'edn' | 'transit';
  mime: string;
  encode(value: unknown): string;
  /** throws {@link DecodeError} on input that does not parse */
  decode(text: string): unknown;
}

export class DecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DecodeError';
  }
}

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Sets a key without going through setters, refusing prototype-pollution keys. */
function put(target: Record<string, unknown>, key: string, value: unknown): void {
  if (FORBIDDEN_KEYS.has(key)) throw new DecodeError(`Forbidden key "${key}"`);
  target[key] = value;
}

// ---- JSON -----------------------------------------------------------------------------

function jsonReviver(this: unknown, key: string, value: unknown): unknown {
  if (FORBIDDEN_KEYS.has(key) && key !== 'constructor') throw new DecodeError(`Forbidden key "${key}"`);
  if (key === 'constructor' && value !== null && typeof value === 'object' && 'prototype' in value) {
    throw new DecodeError('Forbidden key "constructor.prototype"');
  }
  return value;
}

export const json: Format = {
  name: 'json',
  mime: 'application/json',
  encode: (value) => JSON.stringify(value),
  decode(text) {
    try {
      // the reviver only runs when the text mentions a dangerous key, keeping the common case fast
      return /"(?:__proto__|constructor|prototype)"/.test(text) ? JSON.parse(text, jsonReviver) : JSON.parse(text);
    } catch (err) {
      throw err instanceof DecodeError ? err : new DecodeError(`Malformed JSON: ${(err as Error).message}`);
    }
  },
};

// ---- EDN ------------------------------------------------------------------------------

function fromEdn(value: unknown): unknown {
  if (value instanceof Map) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of value) {
      if (typeof k !== 'string' && typeof k !== 'number') throw new DecodeError('EDN map keys must be keywords or strings');
      put(out, String(k), fromEdn(v));
    }
    return out;
  }
  if (Array.isArray(value)) return value.map(fromEdn);
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (value !== null && typeof value === 'object') throw new DecodeError('Unsupported EDN value');
  return value;
}

function toEdnData(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(toEdnData);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = toEdnData(v);
    return out;
  }
  return value;
}

export const edn: Format = {
  name: 'edn',
  mime: 'application/edn',
  encode: (value) => toEDNStringFromSimpleObject(toEdnData(value) as Parameters<typeof toEDNStringFromSimpleObject>[0]),
  decode(text) {
    const problem = ednStructureProblem(text);
    if (problem) throw new DecodeError(`Malformed EDN: ${problem}`);
    let parsed: unknown;
    try {
      parsed = parseEDNString(text, {
        mapAs: 'map', keywordAs: 'string', listAs: 'array', setAs: 'array', charAs: 'string', symbolAs: 'string',
        tagHandlers: { uuid: (v) => v, inst: (v) => (typeof v === 'string' ? new Date(v) : v) },
      });
    } catch (err) {
      throw new DecodeError(`Malformed EDN: ${(err as Error).message}`);
    }
    return fromEdn(parsed);
  },
};

// ---- Transit --------------------------------------------------------------------------

function toTransit(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toTransit);
  if (value instanceof Date) return value.toISOString();
  if (value !== null && typeof value === 'object') {
    const entries: unknown[] = [];
    for (const [k, v] of Object.entries(value)) if (v !== undefined) entries.push(transit.keyword(k), toTransit(v));
    return transit.map(entries);
  }
  return value;
}

function fromTransit(value: unknown): unknown {
  if (transit.isKeyword(value) || transit.isSymbol(value)) return (value as { toString(): string }).toString().replace(/^:/, '');
  if (transit.isMap(value)) {
    const out: Record<string, unknown> = {};
    (value as { forEach(fn: (v: unknown, k: unknown) => void): void }).forEach((v, k) => {
      const key = fromTransit(k);
      if (typeof key !== 'string' && typeof key !== 'number') throw new DecodeError('Transit map keys must be keywords or strings');
      put(out, String(key), fromTransit(v));
    });
    return out;
  }
  if (transit.isSet(value) || transit.isList(value)) {
    const out: unknown[] = [];
    (value as { forEach(fn: (v: unknown) => void): void }).forEach((v) => out.push(fromTransit(v)));
    return out;
  }
  if (Array.isArray(value)) return value.map(fromTransit);
  if (transit.isUUID(value)) return String(value);
  if (transit.isInteger(value) && typeof value === 'object') return Number(String(value));
  if (value instanceof Date) return value.toISOString();
  if (value !== null && typeof value === 'object' && !(value instanceof String)) {
    // a tagged value transit does not know (or a bigdec, URI...): keep its text
    const rep = (value as { rep?: unknown }).rep;
    if (typeof rep === 'string' || typeof rep === 'number') return rep;
    throw new DecodeError('Unsupported Transit value');
  }
  return value;
}

const transitWriter = transit.writer('json');
const transitReader = transit.reader('json');

export const transitJson: Format = {
  name: 'transit',
  mime: 'application/transit+json',
  encode: (value) => transitWriter.write(toTransit(value)),
  decode(text) {
    let parsed: unknown;
    try {
      parsed = transitReader.read(text);
    } catch (err) {
      throw new DecodeError(`Malformed Transit: ${(err as Error).message}`);
    }
    return fromTransit(parsed);
  },
};

export const FORMATS: readonly Format[] = [json, edn, transitJson];

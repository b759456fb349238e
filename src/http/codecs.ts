/**
 * Body codecs shared by the server and the browser client: JSON, EDN and Transit-over-JSON. Inside the app every body is plain data
 * with kebab-case string keys; EDN and Transit write every map key as a keyword
 * (`:access-token`) and read keywords back as their names (`:account/me` -> "account/me").
 */
import { readEdn, writeEdn } from './edn.js';
import { readTransit, writeTransit } from './transit.js';

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

// ---- EDN and Transit ------------------------------------------------------------------

/** A format whose reader throws on bad input: the error becomes a {@link DecodeError}. */
function strictFormat(name: Format['name'], mime: string, label: string, write: (v: unknown) => string, read: (text: string) => unknown): Format {
  return {
    name,
    mime,
    encode: write,
    decode(text) {
      try {
        return read(text);
      } catch (err) {
        throw new DecodeError(`Malformed ${label}: ${(err as Error).message}`);
      }
    },
  };
}

export const edn = strictFormat('edn', 'application/edn', 'EDN', writeEdn, readEdn);
export const transitJson = strictFormat('transit', 'application/transit+json', 'Transit', writeTransit, readTransit);

export const FORMATS: readonly Format[] = [json, edn, transitJson];

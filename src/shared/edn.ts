/**
 * EDN for the API's data: maps (keyword or string keys), vectors, lists, sets, strings,
 * numbers, keywords, symbols, nil, booleans, characters, `#inst`, `#uuid`, other tags (their
 * value is kept), `#_` discards, comments. Written by hand because edn-data measured 5.5x
 * (writing) and 15x (reading) JSON's time on the benchmark's payload; the tests check this
 * reader and writer against edn-data on generated data.
 *
 * Reading is strict: exactly one top-level value, balanced collections, an even number of
 * forms per map. Keywords and symbols read as their names (`:account/me` -> "account/me").
 * The writer is edn-writer.ts.
 */

import { FORBIDDEN_KEYS } from './forbidden-keys.js';
import { MAX_MEMO_KEY_LENGTH, ownCopy } from './memo.js';

export class EdnSyntaxError extends Error {
  /** `reason` names what was wrong, never the input itself */
  constructor(
    readonly reason: string,
    readonly position: number,
  ) {
    super(`${reason} at position ${position}`);
    this.name = 'EdnSyntaxError';
  }
}

const CHAR_NAMES: Record<string, string> = { newline: '\n', space: ' ', tab: '\t', return: '\r', backspace: '\b', formfeed: '\f' };
const ESCAPES: Record<string, string> = { t: '\t', r: '\r', n: '\n', b: '\b', f: '\f', '\\': '\\', '"': '"' };

// whitespace, comma, ( ) [ ] { } " ; as a lookup table
const DELIMITER = new Uint8Array(128);
for (const c of ' \t\n\r\f,()[]{}";') DELIMITER[c.charCodeAt(0)] = 1;

function isDelimiter(c: number): boolean {
  return c < 128 && DELIMITER[c] === 1;
}

// Map keys repeat (every account in a list has the same ones): a key read before is found by
// comparing in place and reused, which saves slicing a new string and V8 interning it again
// when it becomes a property name. Content-addressed (a hit is the same characters), so sharing
// it between requests changes no result; bounded in count and key length, and each kept key is
// a copy of its own (a slice would keep the whole body alive), so hostile input cannot grow it.
const KEY_CACHE_MAX = 2048;
const keyCache = new Map<number, string[]>();
let keyCacheSize = 0;

function cachedKey(text: string, start: number, end: number): string {
  const bucket = (end - start) * 65536 + text.charCodeAt(start);
  const candidates = keyCache.get(bucket);
  if (candidates) {
    for (const key of candidates) if (text.startsWith(key, start)) return key;
  }
  const key = text.slice(start, end);
  if (end - start > MAX_MEMO_KEY_LENGTH || keyCacheSize >= KEY_CACHE_MAX || (candidates?.length ?? 0) >= 8) return key;
  const own = ownCopy(key);
  if (candidates) candidates.push(own);
  else keyCache.set(bucket, [own]);
  keyCacheSize++;
  return own;
}

/** Reads exactly one EDN value. Throws {@link EdnSyntaxError}. */
export function readEdn(text: string): unknown {
  let i = 0;
  const n = text.length;
  const fail = (message: string): never => {
    throw new EdnSyntaxError(message, i);
  };

  const skip = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9 || c === 10 || c === 13 || c === 44 || c === 12) i++;
      else if (c === 59) {
        while (i < n && text.charCodeAt(i) !== 10) i++;
      } else if (c === 35 && text.charCodeAt(i + 1) === 95) {
        i += 2;
        read();
      } // #_ discards the next form
      else break;
    }
  };

  const token = (): string => {
    const start = i;
    while (i < n && !isDelimiter(text.charCodeAt(i))) i++;
    return text.slice(start, i);
  };

  const readString = (): string => {
    i++; // opening quote
    // fast path: the closing quote found natively, and no escape before it
    const end = text.indexOf('"', i);
    if (end < 0) fail('unterminated string');
    const candidate = text.slice(i, end);
    if (candidate.indexOf('\\') < 0) {
      i = end + 1;
      return candidate;
    }
    let out = '';
    let start = i;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 34) {
        out += text.slice(start, i);
        i++;
        return out;
      }
      if (c === 92) {
        out += text.slice(start, i);
        const e = text[i + 1];
        if (e === 'u') {
          const hex = text.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('bad unicode escape');
          out += String.fromCharCode(parseInt(hex, 16));
          i += 6;
        } else if (e !== undefined && e in ESCAPES) {
          out += ESCAPES[e];
          i += 2;
        } else fail('bad escape');
        start = i;
      } else i++;
    }
    return fail('unterminated string');
  };

  const readMap = (): Record<string, unknown> => {
    i++; // opening brace
    const out: Record<string, unknown> = {};
    for (;;) {
      skip();
      if (i >= n) fail('unclosed map');
      const c = text.charCodeAt(i);
      if (c === 125) {
        i++;
        return out;
      }
      if (c === 41 || c === 93) fail('unexpected closing bracket');
      const key = c === 58 && text.charCodeAt(i + 1) !== 58 ? readKeyword() : read();
      skip();
      if (i >= n) fail('unclosed map');
      if (text.charCodeAt(i) === 125) fail('map with an odd number of forms');
      if (typeof key !== 'string' && typeof key !== 'number') fail('map keys must be keywords, strings or numbers');
      const name = String(key);
      if (FORBIDDEN_KEYS.has(name)) fail(`forbidden key "${name}"`); // one of three fixed names
      out[name] = read();
    }
  };

  // a keyword (the common map key) reads as its name
  const readKeyword = (): string => {
    const start = ++i;
    while (i < n && !isDelimiter(text.charCodeAt(i))) i++;
    if (i === start || (i === start + 1 && text.charCodeAt(start) === 47)) {
      i = start - 1;
      fail('bad keyword');
    }
    return cachedKey(text, start, i);
  };

  const readCollection = (close: number, kind: 'vector' | 'list' | 'set'): unknown[] => {
    i++; // opening bracket
    const items: unknown[] = [];
    for (;;) {
      skip();
      if (i >= n) fail(`unclosed ${kind}`);
      if (text.charCodeAt(i) === close) {
        i++;
        break;
      }
      const c = text.charCodeAt(i);
      if (c === 41 || c === 93 || c === 125) fail('unexpected closing bracket');
      items.push(read());
    }
    return items;
  };

  const readAtom = (): unknown => {
    const start = i;
    if (text.charCodeAt(i) === 58 && text.charCodeAt(i + 1) !== 58) return readKeyword();
    const t = token();
    if (t === '') fail('unexpected character');
    if (t === 'nil') return null;
    if (t === 'true') return true;
    if (t === 'false') return false;
    const c = t.charCodeAt(0);
    if (c === 58) {
      // keyword
      if (t.length < 2 || t === ':/') {
        i = start;
        fail('bad keyword');
      }
      if (t.charCodeAt(1) !== 58) return t.slice(1);
      return t.startsWith('::') ? t.slice(2) : t.slice(1);
    }
    if ((c >= 48 && c <= 57) || ((c === 43 || c === 45) && t.length > 1 && t.charCodeAt(1) >= 48 && t.charCodeAt(1) <= 57)) {
      if (t.length < 16 && /^-?\d+$/.test(t)) return Number(t); // the common case
      const m = /^[+-]?(\d+)(N)?$/.exec(t);
      // big integers read as the nearest double, as JSON.parse reads them
      if (m) return Number(t.replace(/N$/, ''));
      if (/^[+-]?\d+(\.\d*)?([eE][+-]?\d+)?M?$/.test(t)) return Number(t.replace(/M$/, ''));
      if (/^[+-]?\d+\/\d+$/.test(t)) {
        const [a, b] = t.split('/');
        return Number(a) / Number(b);
      }
      i = start;
      return fail('bad number');
    }
    return t; // a symbol reads as its name
  };

  const read = (): unknown => {
    skip();
    if (i >= n) return fail('no value');
    const c = text.charCodeAt(i);
    switch (c) {
      case 34:
        return readString();
      case 123:
        return readMap();
      case 91:
        return readCollection(93, 'vector');
      case 40:
        return readCollection(41, 'list');
      case 41:
      case 93:
      case 125:
        return fail('unexpected closing bracket');
      case 92: {
        // character
        i++;
        const start = i;
        i++; // the character itself, even a delimiter
        while (i < n && !isDelimiter(text.charCodeAt(i))) i++;
        const name = text.slice(start, i);
        if (name.length === 1) return name;
        if (name in CHAR_NAMES) return CHAR_NAMES[name];
        if (/^u[0-9a-fA-F]{4}$/.test(name)) return String.fromCharCode(parseInt(name.slice(1), 16));
        return fail('bad character');
      }
      case 35: {
        // dispatch
        const next = text.charCodeAt(i + 1);
        if (next === 123) {
          i++;
          return readCollection(125, 'set');
        }
        if (next === 35) {
          // ##Inf ##-Inf ##NaN
          i += 2;
          const t = token();
          if (t === 'Inf') return Infinity;
          if (t === '-Inf') return -Infinity;
          if (t === 'NaN') return NaN;
          return fail('bad symbolic value');
        }
        i++;
        const tag = token();
        if (!tag || !/^[A-Za-z]/.test(tag)) fail('bad tag');
        const value = read();
        if (tag === 'inst') {
          if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) fail('bad #inst');
          return new Date(value as string).toISOString();
        }
        if (tag === 'uuid' && typeof value !== 'string') fail('bad #uuid');
        return value;
      }
      default:
        return readAtom();
    }
  };

  const value = read();
  skip();
  if (i < n) fail('more than one top-level value');
  return value;
}

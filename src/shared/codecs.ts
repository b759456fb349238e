/**
 * Body codecs shared by the server and the browser client: JSON, EDN and Transit-over-JSON. Inside the app every body is plain data
 * with kebab-case string keys; EDN and Transit write every map key as a keyword
 * (`:access-token`) and read keywords back as their names (`:account/me` -> "account/me").
 */
import { FORBIDDEN_KEYS } from './forbidden-keys.js';
import { EdnSyntaxError, readEdn } from './edn.js';
import { writeEdn } from './edn-writer.js';
import { readTransit, TransitShapeError, writeTransit } from './transit.js';

export interface Format {
  name: 'json' | 'edn' | 'transit';
  mime: string;
  encode(value: unknown): string;
  /** throws {@link DecodeError} on input that does not parse */
  decode(text: string): unknown;
}

/**
 * What a {@link DecodeError} says, as data, so that the server can word it in the reader's
 * language (src/http/error-answers.ts): never the input itself.
 */
export interface DecodeProblem {
  /** the format as it is written: `JSON`, `EDN`, `Transit` */
  format?: string;
  /** where it failed, 1-based */
  line?: number;
  column?: number;
  /** what was wrong, in English: the codec's own words or the parser's */
  reason?: string;
  /** the forbidden key a body held (one of three fixed names) */
  key?: string;
}

export class DecodeError extends Error {
  constructor(
    message: string,
    readonly problem: DecodeProblem = {},
  ) {
    super(message);
    this.name = 'DecodeError';
  }
}

/** A malformed body of `format`: `Malformed EDN at line 1, column 8: unclosed map` (the place and the reason when known). */
function malformed(format: string, reason?: string, place?: { line: number; column: number }): DecodeError {
  const at = place ? ` at line ${place.line}, column ${place.column}` : '';
  return new DecodeError(`Malformed ${format}${at}${reason === undefined ? '' : `: ${reason}`}`, { format, reason, ...place });
}

export { FORBIDDEN_KEYS };

export function forbiddenKey(key: string): DecodeError {
  return new DecodeError(`Forbidden key "${key}"`, { key }); // one of three fixed names, never other input
}

// ---- the NUL character ---------------------------------------------------------------
// PostgreSQL cannot store U+0000 in text: a string holding it is refused with a clear 400 when
// it is decoded, in every format, instead of a 500 from the database later.

/**
 * Whether decoded `text` may hold a NUL: the raw character, or the `\u0000` escape of JSON,
 * Transit and EDN strings. Text without either cannot, and is not searched.
 */
export const MAY_HOLD_NUL = /\u0000|\\u0000/;

/** The JSON pointer of the first key or string holding U+0000 in `root`, or undefined; iterative. */
export function nulPath(root: unknown): string | undefined {
  const stack: Array<[unknown, string]> = [[root, '']];
  while (stack.length) {
    const [value, path] = stack.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return path || '/';
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (Array.isArray(value)) {
      for (const [i, item] of value.entries()) stack.push([item, `${path}/${i}`]);
      continue;
    }
    for (const key in value) {
      const at = `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (key.includes('\u0000')) return at.replace(/\u0000/g, '\\u0000');
      stack.push([(value as Record<string, unknown>)[key], at]);
    }
  }
  return undefined;
}

// ---- error positions ------------------------------------------------------------------
// Messages say where input failed, never what it was: V8's JSON messages quote the body
// (`Unexpected token 'p', "password=…" is not valid JSON`), and a body may hold a password.

/** The line and column (1-based) of a 0-based position in `text`. */
export function lineColumn(text: string, position: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < position; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: position - lineStart + 1 };
}

/**
 * Where JSON.parse gave up, for the one V8 message that names no position ("Unexpected
 * token"): a lenient scan that stops at the first character no JSON value can hold. Runs only
 * after a parse failed.
 */
function unexpectedTokenPosition(text: string): number {
  let i = 0;
  const n = text.length;
  const ws = () => {
    while (i < n && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const stop = (): never => {
    throw new RangeError('stop');
  };
  const expect = (c: string) => {
    ws();
    if (text[i] !== c) stop();
    i++;
  };
  const string = () => {
    i++;
    while (i < n && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    if (i >= n) stop();
    i++;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '"') {
      string();
      return;
    }
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      i++;
      ws();
      if (text[i] === close) {
        i++;
        return;
      }
      for (;;) {
        if (close === '}') {
          ws();
          if (text[i] !== '"') stop();
          string();
          expect(':');
        }
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        expect(close);
        return;
      }
    }
    if (c !== undefined && /[-0-9]/.test(c)) {
      while (i < n && /[-+.eE0-9]/.test(text[i])) i++;
      return;
    }
    for (const literal of ['true', 'false', 'null'])
      if (text.startsWith(literal, i)) {
        i += literal.length;
        return;
      }
    stop();
  };
  try {
    value();
    ws();
  } catch {
    // stopped (or nested too deep to scan): i is where
  }
  return Math.min(i, n);
}

/** A DecodeError for a JSON.parse failure: the kind of error and where, no input. */
function jsonSyntaxError(label: string, text: string, err: Error): DecodeError {
  const message = err.message;
  if (/^Unexpected end of JSON input/.test(message)) return malformed(label, 'unexpected end of input');
  // V8's other messages are fixed text plus a position; anything unrecognised becomes "invalid syntax"
  const known = /^([A-Za-z ,:'{}[\]-]+?) in JSON at position (\d+)/.exec(message);
  const unexpected = /^Unexpected token/.test(message);
  const position = known && !unexpected ? Number(known[2]) : unexpectedTokenPosition(text);
  const kind = known && !unexpected ? known[1].charAt(0).toLowerCase() + known[1].slice(1) : 'unexpected character';
  return malformed(label, kind, lineColumn(text, position));
}

// ---- JSON -----------------------------------------------------------------------------

/** Throws on a forbidden key anywhere in `root`; iterative, so no nesting depth overflows it. */
function refuseForbiddenKeys(root: unknown): void {
  const stack: unknown[] = [root];
  while (stack.length) {
    const value = stack.pop();
    if (value === null || typeof value !== 'object') continue;
    if (Array.isArray(value)) {
      for (const item of value) stack.push(item);
      continue;
    }
    for (const key in value) {
      if (FORBIDDEN_KEYS.has(key)) throw forbiddenKey(key);
      stack.push((value as Record<string, unknown>)[key]);
    }
  }
}

// A key can spell a forbidden name literally or with \u escapes: text with neither cannot hold
// one and is not searched. JSON.parse makes `__proto__` an own key, so the search after
// parsing sees it (measured: about 1.3x the parse alone; a reviver cost 3-7x).
const MAY_HOLD_FORBIDDEN_KEY = /__proto__|constructor|prototype|\\u/;

export const json: Format = {
  name: 'json',
  mime: 'application/json',
  encode: (value) => JSON.stringify(value),
  decode(text) {
    try {
      const value: unknown = JSON.parse(text);
      if (MAY_HOLD_FORBIDDEN_KEY.test(text)) refuseForbiddenKeys(value);
      return value;
    } catch (err) {
      throw err instanceof DecodeError ? err : jsonSyntaxError('JSON', text, err as Error);
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
        if (err instanceof EdnSyntaxError) throw malformed(label, err.reason, lineColumn(text, err.position));
        if (err instanceof TransitShapeError) throw malformed(label, err.message);
        if (err instanceof SyntaxError) throw jsonSyntaxError(label, text, err); // Transit's JSON layer
        throw malformed(label); // e.g. nested too deep: nothing more to say safely
      }
    },
  };
}

export const edn = strictFormat('edn', 'application/edn', 'EDN', writeEdn, readEdn);
export const transitJson = strictFormat('transit', 'application/transit+json', 'Transit', writeTransit, readTransit);

export const FORMATS: readonly Format[] = [json, edn, transitJson];

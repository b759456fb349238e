/**
 * The hand-written EDN and Transit codecs against the reference libraries (edn-data,
 * transit-js) on generated data: what we write, they read back identically, and what they
 * write, we read back identically.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseEDNString, toEDNStringFromSimpleObject } from 'edn-data';
import fc from 'fast-check';
import transit from 'transit-js';
import { readEdn } from '../../src/shared/edn.js';
import { writeEdn } from '../../src/shared/edn-writer.js';
import { readTransit, writeTransit } from '../../src/shared/transit.js';

const SEED = Number(process.env.FC_SEED ?? Date.now() % 1_000_000);
const RUNS = 300;
const params = { seed: SEED, numRuns: RUNS };

const keywordKey = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}(\/[a-z][a-z0-9-]{0,8})?$/);
const anyKey = fc.string({ maxLength: 12 }).filter((k) => !['__proto__', 'constructor', 'prototype'].includes(k));
const number = fc.oneof(
  fc.integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Object.is(d, -0)),
);
const leaf = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'grapheme', maxLength: 10 }),
  number,
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom('~x', '^y', '`z', '~:kw'),
);
const data = (key: fc.Arbitrary<string>) =>
  fc
    .letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        leaf,
        fc.array(tie('value'), { maxLength: 5 }),
        fc.dictionary(key, tie('value'), { maxKeys: 5, noNullPrototype: true }),
      ),
    }))
    .value.map((v) => ({ root: v }));

/** transit-js with plain objects and keywords as names: the reference reader. */
const referenceReader = transit.reader('json', {
  mapBuilder: {
    init: () => ({}),
    add: (m: Record<string, unknown>, k: unknown, v: unknown) => {
      m[String(k)] = v;
      return m;
    },
    finalize: (m: unknown) => m,
  },
  handlers: { ':': (rep: string) => rep },
} as never);
const referenceWriter = transit.writer('json');
function toReferenceTransit(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(toReferenceTransit);
  if (v !== null && typeof v === 'object') return transit.map(Object.entries(v).flatMap(([k, x]) => [transit.keyword(k), toReferenceTransit(x)]));
  return v;
}
const plain = (v: unknown): unknown => JSON.parse(JSON.stringify(v, (_k, x) => (transit.isInteger(x) ? Number(String(x)) : x)));

describe(`codecs against the reference libraries (seed ${SEED})`, () => {
  it('Transit: transit-js reads what we write', () => {
    fc.assert(
      fc.property(data(anyKey), (v) => {
        assert.deepEqual(plain(referenceReader.read(writeTransit(v))), v);
      }),
      params,
    );
  });

  it('Transit: we read what transit-js writes, and our own output', () => {
    fc.assert(
      fc.property(data(anyKey), (v) => {
        assert.deepEqual(readTransit(referenceWriter.write(toReferenceTransit(v))), v);
        assert.deepEqual(readTransit(writeTransit(v)), v);
      }),
      params,
    );
  });

  it('Transit: the key cache survives more than 44 * 44 distinct keys', () => {
    const big = Array.from({ length: 2500 }, (_, i) => ({ [`key-${i}`]: i, shared: i }));
    assert.deepEqual(plain(referenceReader.read(writeTransit(big))), big);
    assert.deepEqual(readTransit(writeTransit(big)), big);
  });

  it('Transit: reads the tagged forms transit-js writes', () => {
    const w = transit.writer('json');
    const verbose = transit.writer('json-verbose');
    const uuid = '3b6b1b5e-8c1d-4b7a-9d2e-000000000001';
    const value = transit.map([
      transit.keyword('set'),
      transit.set([1, 2]),
      transit.keyword('list'),
      transit.list(['a', 'b']),
      transit.keyword('uuid'),
      transit.uuid(uuid),
      transit.keyword('at'),
      new Date(Date.UTC(2026, 10, 22, 10, 0, 0)),
      transit.keyword('sym'),
      transit.symbol('a-symbol'),
      transit.keyword('int-keys'),
      transit.map([1, 'one', 2, 'two']),
      transit.keyword('composite-keys'),
      transit.map([transit.keyword('k'), 1, 'plain', 2]),
    ]);
    const expected = {
      set: [1, 2],
      list: ['a', 'b'],
      uuid,
      at: '2026-11-22T10:00:00.000Z',
      sym: 'a-symbol',
      'int-keys': { 1: 'one', 2: 'two' },
      'composite-keys': { k: 1, plain: 2 },
    };
    assert.deepEqual(readTransit(w.write(value)), expected);
    assert.deepEqual(readTransit(verbose.write(value)), expected);
    for (const scalar of ['text', 42, true, null, '~tilde']) assert.deepEqual(readTransit(w.write(scalar)), scalar);
    assert.equal(readTransit(writeTransit('~tilde')), '~tilde');
  });

  it('Transit: a read that fails cannot change how the next one reads', () => {
    const valid = '["^ ","~:type","x","~:message","m","~:errors",[["^ ","~:path","/a","^1","b"]]]';
    const expected = { type: 'x', message: 'm', errors: [{ path: '/a', message: 'b' }] };
    for (const hostile of [
      '["^ ","~:prototype",1,"~:__proto__",2]',
      '["^ ","~:aaaa",1,"~:__proto__",2]',
      '["^ ","~:aaaa",1,"~:bbbb",["^ ","~:__proto__",1]]',
    ]) {
      assert.throws(() => readTransit(hostile));
      assert.deepEqual(readTransit(valid), expected);
    }
  });

  it('EDN: edn-data reads what we write', () => {
    fc.assert(
      fc.property(data(keywordKey), (v) => {
        const parsed = parseEDNString(writeEdn(v), { mapAs: 'object', keywordAs: 'string', listAs: 'array' });
        assert.deepEqual(parsed, v);
      }),
      params,
    );
  });

  it('EDN: we read what edn-data writes, and our own output with any keys', () => {
    fc.assert(
      fc.property(data(keywordKey), (v) => {
        assert.deepEqual(readEdn(toEDNStringFromSimpleObject(v as never)), v);
      }),
      params,
    );
    fc.assert(
      fc.property(data(anyKey), (v) => {
        assert.deepEqual(readEdn(writeEdn(v)), v);
      }),
      params,
    );
  });

  it('EDN: reads the rest of the notation', () => {
    assert.deepEqual(
      readEdn(
        '{:a 1, :b [1 2 #{3}] ; comment\n :c #inst "2020-01-01T00:00:00Z" #_ :x :d \\c :e (1 "two") :f \\newline :h #uuid "3b6b1b5e-0000-4000-8000-000000000000" :i -5 :j 1.5e3 :k :ns/kw :l sym :m 42N :n "\\u00e9\\t"}',
      ),
      {
        a: 1,
        b: [1, 2, [3]],
        c: '2020-01-01T00:00:00.000Z',
        d: 'c',
        e: [1, 'two'],
        f: '\n',
        h: '3b6b1b5e-0000-4000-8000-000000000000',
        i: -5,
        j: 1500,
        k: 'ns/kw',
        l: 'sym',
        m: 42,
        n: 'é\t',
      },
    );
  });

  it('EDN: map keys read through the shared key cache stay exact, however many look alike', () => {
    // same length and first character: one cache bucket, compared in place
    const keys = Array.from({ length: 40 }, (_, i) => `k${String(i).padStart(3, '0')}`);
    const expected = Object.fromEntries(keys.map((k, i) => [k, i]));
    const text = `{${keys.map((k, i) => `:${k} ${i}`).join(' ')}}`;
    assert.deepEqual(readEdn(text), expected);
    // thousands of distinct keys fill the bounded cache; reads stay exact before and after
    for (let round = 0; round < 5; round++) {
      const many = Array.from({ length: 1000 }, (_, i) => `x${round}-${i}`);
      assert.deepEqual(readEdn(`{${many.map((k) => `:${k} 1`).join(' ')}}`), Object.fromEntries(many.map((k) => [k, 1])));
    }
    assert.deepEqual(readEdn(text), expected);
    assert.deepEqual(readEdn('{:k000 1 :k0001 2 :k00 3}'), { k000: 1, k0001: 2, k00: 3 }, 'a cached key is not a prefix match');
  });

  it('EDN: refuses malformed input', () => {
    for (const bad of ['{:n 1', '{:n 1}}', '[1 2', '{:a 1} {:b 2}', '"abc', '{:a}', '1 ]', '', '   ', '{:__proto__ 1}', '#inst 5', '1x', '"\\q"', ':', '#_']) {
      assert.throws(() => readEdn(bad), Error, bad);
    }
  });
});

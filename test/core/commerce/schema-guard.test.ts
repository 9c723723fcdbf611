import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compileGuard } from '../../../src/core/commerce/schema-guard.js';
import { orderSchema, orderSearchResultSchema } from '../../../src/core/commerce/schemas.js';
import { CURRENCIES, generateOrder, STATES } from '../../../src/sandbox/commerce/generate.js';

const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`../../fixtures/commerce/${name}`, import.meta.url), 'utf8'));
const ORDER = fixture('order-get-adobedocs.json');
const SEARCH = fixture('orders-search-vsf.json');
const isOrder = compileGuard(orderSchema);
const isSearchResult = compileGuard(orderSearchResultSchema);

const generated = (seed: number, id: number, stateIndex: number, currencyIndex: number) =>
  generateOrder(seed, { id, created: '2024-03-05 10:20:30', stateIndex, currencyIndex });

/** The guard's answer, after checking it is zod's. */
function agreed(guard: (value: unknown) => boolean, schema: z.ZodType, value: unknown): boolean {
  const accepted = guard(value);
  expect(accepted, 'guard and zod disagree').toBe(schema.safeParse(value).success);
  return accepted;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') for (const child of Object.values(value)) deepFreeze(child);
  return Object.freeze(value);
}

type Path = (string | number)[];

/** Every path into a value, the root included. */
function pathsOf(value: unknown, at: Path = [], out: Path[] = []): Path[] {
  out.push(at);
  if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) pathsOf(child, [...at, Array.isArray(value) ? Number(key) : key], out);
  }
  return out;
}

type Edit = { set: unknown } | { remove: true };

/** A deep copy of `root` with the value at `path` replaced, or removed (the key deleted, the element spliced out). */
function edited(root: unknown, path: Path, edit: Edit): unknown {
  if (path.length === 0) return 'set' in edit ? edit.set : undefined;
  const copy = structuredClone(root);
  const parent = path.slice(0, -1).reduce<any>((node, key) => node[key], copy); // eslint-disable-line @typescript-eslint/no-explicit-any
  const key = path.at(-1)!;
  if ('set' in edit) parent[key] = edit.set;
  else if (Array.isArray(parent)) parent.splice(key as number, 1);
  else delete parent[key];
  return copy;
}

describe('compileGuard: the recorded responses and generated orders', () => {
  it('accepts the recorded order and search result, as zod does, reading them in place', () => {
    // Frozen: a guard that wrote to its input (or to a copy it took by mutation) would throw here.
    expect(agreed(isOrder, orderSchema, deepFreeze(structuredClone(ORDER)))).toBe(true);
    expect(agreed(isSearchResult, orderSearchResultSchema, deepFreeze(structuredClone(SEARCH)))).toBe(true);
    const value = structuredClone(SEARCH);
    isSearchResult(value);
    expect(value).toEqual(SEARCH);
  });

  it('agrees with zod on each order of the search result', () => {
    for (const order of (SEARCH as { items: unknown[] }).items) expect(agreed(isOrder, orderSchema, order)).toBe(true);
  });

  it('accepts every state and currency of the sandbox generator', () => {
    for (const stateIndex of STATES.keys()) {
      for (const currencyIndex of CURRENCIES.keys()) {
        expect(agreed(isOrder, orderSchema, generated(42, 1 + stateIndex * 4 + currencyIndex, stateIndex, currencyIndex))).toBe(true);
      }
    }
  });

  it('accepts generated orders for any seed and id', () => {
    fc.assert(fc.property(
      fc.integer(), fc.integer({ min: 1, max: 10_000_000 }), fc.nat(STATES.length - 1), fc.nat(CURRENCIES.length - 1),
      (seed, id, stateIndex, currencyIndex) => agreed(isOrder, orderSchema, generated(seed, id, stateIndex, currencyIndex)),
    ), { numRuns: 200 });
  });
});

// Both ways a guard is built: generated functions (Node) and closures (runtimes without `new Function`).
describe.each([true, false])('compileGuard (generateCode: %s): agrees with zod on mutated orders', (generateCode) => {
  const order = compileGuard(orderSchema, { generateCode });
  const searchResult = compileGuard(orderSearchResultSchema, { generateCode });
  const bases = [
    { guard: order, schema: orderSchema, value: ORDER },
    { guard: searchResult, schema: orderSearchResultSchema, value: SEARCH },
    { guard: order, schema: orderSchema, value: generated(7, 123, 0, 2) }, // unpaid, JPY
    { guard: order, schema: orderSchema, value: generated(7, 456, 2, 3) }, // complete, KWD
  ];
  const targets = bases.flatMap((base) => pathsOf(base.value).map((path) => ({ base, path })));
  // Values near the schema's edges: random JSON alone seldom hits a regex, a flag or an int bound.
  const nearMiss = fc.constantFrom<unknown>(
    0, 1, 2, -1, 1.5, -0, 2 ** 53, Number.NaN, Infinity, '', 'x', 'USD', 'usd', 'US', '2017-08-21 22:22:19', '2017-08-21T22:22:19',
    null, true, [], [1], ['a'], {}, { item_id: 1, sku: 's', qty_ordered: 1 },
  );
  const edit: fc.Arbitrary<Edit> = fc.oneof(
    fc.record({ set: fc.jsonValue({ maxDepth: 2 }) }),
    fc.record({ set: nearMiss }),
    fc.constant({ set: undefined }),
    fc.constant({ remove: true as const }),
  );

  it(`gives zod's answer for one value replaced or removed anywhere (${targets.length} paths)`, () => {
    fc.assert(fc.property(fc.nat(targets.length - 1), edit, (index, change) => {
      const { base, path } = targets[index]!;
      const value = edited(base.value, path, change);
      const parsed = base.schema.safeParse(value);
      expect(base.guard(value), `${path.join('.') || '(root)'} ← ${JSON.stringify(change)}`).toBe(parsed.success);
      // What lets callers keep the input: where both accept, zod's copy equals it.
      if (parsed.success) expect(isDeepStrictEqual(parsed.data, value)).toBe(true);
    }), { numRuns: 3_000 });
  });
});

describe('compileGuard: edge cases', () => {
  const cases: [name: string, path: Path, edit: Edit, expected: boolean][] = [
    ['an int field given 1.5', ['items', 0, 'item_id'], { set: 1.5 }, false],
    ['an int field given an unsafe integer', ['store_id'], { set: 2 ** 53 }, false],
    ['a negative entity_id', ['entity_id'], { set: -3 }, false],
    ['an entity_id of 0 (positive)', ['entity_id'], { set: 0 }, false],
    ['an empty increment_id', ['increment_id'], { set: '' }, false],
    ["a currency 'usd'", ['order_currency_code'], { set: 'usd' }, false],
    ['a timestamp in ISO T format', ['created_at'], { set: '2017-08-21T22:22:19' }, false],
    ['a number that is not finite', ['grand_total'], { set: Infinity }, false],
    ['a flag given 2', ['customer_is_guest'], { set: 2 }, false],
    ['a flag given 1', ['customer_is_guest'], { set: 1 }, true],
    ['an item extension_attributes []', ['items', 0, 'extension_attributes'], { set: [] }, true],
    ['an item extension_attributes [1]', ['items', 0, 'extension_attributes'], { set: [1] }, false],
    ['an item extension_attributes object', ['items', 0, 'extension_attributes'], { set: { platform_placement_id: 'p' } }, true],
    ['null where nullish is allowed', ['billing_address', 'telephone'], { set: null }, true],
    ['null on a nullish int', ['billing_address', 'region_id'], { set: null }, true],
    ['null where only optional is allowed', ['customer_id'], { set: null }, false],
    ['a missing optional key', ['customer_id'], { remove: true }, true],
    ['an optional key present as undefined', ['customer_id'], { set: undefined }, true],
    ['a missing optional object', ['billing_address'], { remove: true }, true],
    ['a missing required key', ['customer_email'], { remove: true }, false],
    ['a required key present as undefined', ['customer_email'], { set: undefined }, false],
    ['a missing required key in an item', ['items', 0, 'sku'], { remove: true }, false],
    ['an array where an object is expected', ['billing_address'], { set: [] }, false],
    ['an object where an array is expected', ['items'], { set: {} }, false],
    ['a payment extension_attributes [] (array or object)', ['payment', 'extension_attributes'], { set: [] }, true],
    ['a string in a number field', ['grand_total'], { set: '165' }, false],
  ];

  it.each(cases)('%s', (_name, path, edit, expected) => {
    expect(agreed(isOrder, orderSchema, edited(ORDER, path, edit))).toBe(expected);
  });

  it('accepts unknown extra fields and leaves the value as it was', () => {
    const order = edited(edited(ORDER, ['x_custom'], { set: { a: [1, null] } }), ['items', 0, 'parent_item'], { set: { anything: true } });
    const before = structuredClone(order);
    expect(agreed(isOrder, orderSchema, order)).toBe(true);
    expect(order).toEqual(before);
    expect(order).toMatchObject({ x_custom: { a: [1, null] } });
  });

  it('checks total_count of a search: 0 passes, -1 does not', () => {
    expect(agreed(isSearchResult, orderSearchResultSchema, edited(SEARCH, ['total_count'], { set: 0 }))).toBe(true);
    expect(agreed(isSearchResult, orderSearchResultSchema, edited(SEARCH, ['total_count'], { set: -1 }))).toBe(false);
  });
});

describe('compileGuard: unsupported schemas throw when compiled', () => {
  // Each would change the value (strip, transform) or needs a check the guard does not implement.
  it.each<[string, () => z.ZodType]>([
    ['a stripping z.object', () => z.object({ a: z.string() })],
    ['a z.strictObject', () => z.strictObject({ a: z.string() })],
    ['a transform', () => z.string().transform((s) => s.length)],
    ['a pipe', () => z.string().pipe(z.string())],
    ['a z.string().email() check', () => z.string().email()],
    ['z.date()', () => z.date()],
    ['a refine on a literal (not silently ignored)', () => z.literal([0, 1]).refine((v) => v === 1)],
    ['a refine on a union', () => z.union([z.string(), z.number()]).refine(() => false)],
    ['a refine on an optional', () => z.string().optional().refine(() => false)],
    ['an array with a min check', () => z.array(z.string()).min(1)],
    ['an unsupported schema deep inside a loose object', () => z.looseObject({ a: z.array(z.looseObject({ b: z.object({}) })) })],
  ])('%s', (_name, make) => {
    expect(() => compileGuard(make())).toThrow(/compileGuard/);
  });
});

describe('compileGuard: format schemas (z.int(), z.email()…) are read as checks', () => {
  it('z.int() compiles and agrees with zod on 1, 1.5, 2**53 and "1", alone and as a field, generated or not', () => {
    const values = [1, 1.5, 2 ** 53, '1'];
    const int = z.int();
    const field = z.looseObject({ n: int, m: z.int().nullable().optional() });
    for (const generateCode of [true, false]) {
      const alone = compileGuard(int, { generateCode });
      const inObject = compileGuard(field, { generateCode });
      expect(values.map((v) => agreed(alone, int, v))).toEqual([true, false, false, false]);
      expect(values.map((v) => agreed(inObject, field, { n: v }))).toEqual([true, false, false, false]);
      expect(values.map((v) => agreed(inObject, field, { n: 1, m: v }))).toEqual([true, false, false, false]);
      expect(agreed(inObject, field, { n: 1, m: null })).toBe(true);
    }
  });

  // Read as no check at all, each would accept what zod refuses (any string as an email, 2**40 as an int32…).
  it.each<[string, () => z.ZodType]>([
    ['z.email()', () => z.email()],
    ['z.int32()', () => z.int32()],
    ['z.iso.datetime()', () => z.iso.datetime()],
    ['z.xor([z.string(), z.number()])', () => z.xor([z.string(), z.number()])],
  ])('%s throws at compile time, saying how to fix it', (_name, make) => {
    for (const generateCode of [true, false]) {
      expect(() => compileGuard(make(), { generateCode })).toThrow(/^compileGuard: .* is not supported/);
      expect(() => compileGuard(z.looseObject({ field: make() }), { generateCode })).toThrow(/Keep order schemas to loose objects.*or teach src\/core\/commerce\/schema-guard\.ts the new case/);
    }
  });
});

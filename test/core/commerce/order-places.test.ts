import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { placeOrders, type OrderPlaces } from '../../../src/core/commerce/order-places.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The answer without its orders, and each order, parsed from the places found. */
function pieces(bytes: Uint8Array, places: OrderPlaces): { envelope: unknown; orders: unknown[] } {
  const envelope: unknown = JSON.parse(decoder.decode(bytes.subarray(0, places.beforeItems)) + decoder.decode(bytes.subarray(places.afterItems)));
  return { envelope, orders: places.starts.map((start, i) => JSON.parse(decoder.decode(bytes.subarray(start, places.ends[i]))) as unknown) };
}

/** Places found in `text`, checked against JSON.parse of the whole: the same answer, cut where the orders are. */
function placedLikeJsonParse(text: string): OrderPlaces | undefined {
  const bytes = encoder.encode(text);
  const places = placeOrders(bytes);
  if (places === undefined) return undefined;
  const whole = JSON.parse(text) as { items: Array<{ entity_id: number }> };
  const { envelope, orders } = pieces(bytes, places);
  expect(envelope).toEqual({ ...whole, items: [] });
  expect(orders).toEqual(whole.items);
  expect(places.ids).toEqual(whole.items.map((order) => order.entity_id));
  return places;
}

const answer = fc.record({
  items: fc.array(fc.record({ entity_id: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), rest: fc.dictionary(fc.string(), fc.jsonValue()) }).map(({ entity_id, rest }) => ({ ...rest, entity_id })), { maxLength: 5 }),
  search_criteria: fc.jsonValue(),
  total_count: fc.nat(),
  other: fc.dictionary(fc.string({ unit: 'grapheme' }), fc.jsonValue()),
});

describe('placeOrders', () => {
  it('finds each order of any answer JSON.stringify writes, compact or indented, and its entity_id', () => {
    fc.assert(
      fc.property(answer, fc.constantFrom(undefined, 1, '\t'), (value, indent) => {
        const text = JSON.stringify(value, null, indent);
        expect(placedLikeJsonParse(text)).toBeDefined();
      }),
    );
  });

  it('finds the orders of the search fixture (a real platform answer) and of one starting with a BOM', () => {
    const text = readFileSync(new URL('../../fixtures/commerce/orders-search-vsf.json', import.meta.url), 'utf8');
    expect(placedLikeJsonParse(text)?.ids).toHaveLength(1);
    expect(placeOrders(encoder.encode(`\ufeff${text}`))?.ids).toHaveLength(1);
  });

  it('reads brackets and quotes inside strings, escaped or not, as text', () => {
    const places = placedLikeJsonParse('{"items":[{"note":"}]\\"{[\\\\","entity_id":5},{"b":[1,{"c":"]"}],"entity_id":7}],"total_count":2}');
    expect(places?.ids).toEqual([5, 7]);
  });

  it('leaves an answer of any other shape to be parsed whole', () => {
    for (const text of [
      '{"items":null}',
      '{"total_count":0}',
      '[{"entity_id":5}]',
      '{"items":[{"entity_id":5},[1]]}',
      '{"items":[{"entity_id":"5"}]}', // a string: the schema decides
      '{"items":[{"entity_id":5.0}]}',
      '{"items":[{"entity_id":5e0}]}',
      '{"items":[{"entity_id":05}]}',
      '{"items":[{"entity_id":-5}]}',
      '{"items":[{"id":5}]}',
      '{"items":[{"entity_id":5,"entity_id":6}]}', // JSON.parse keeps the last
      '{"items":[{"entity_id":5}],"items":[]}',
      '{"items":[{"entity_id":5} {"entity_id":6}]}',
      '{"items":["junk" {"entity_id":5}]}', // a string among the orders: every piece would parse
      '{"items":[{"entity_id":5} "junk"]}',
      '{"items":[{"entity_id":5},]}',
      '{"items":[,{"entity_id":5}]}',
      '{"items":[{"entity_id":5}]} trailing',
      '{"items":[{"entity_id":5}',
      '{"items":[{"entity_id":9007199254740993}]}', // past 2^53, where JSON.parse rounds
    ]) {
      expect(placeOrders(encoder.encode(text)), text).toBeUndefined();
    }
  });

  /** A byte changed, or a token inserted: what breaks JSON without moving where the orders are, or by moving it. */
  const edit = fc.oneof(fc.integer({ min: 0, max: 255 }), fc.constantFrom('"x"', '1', ',', ':', '{', '}', '[', ']', '"', '\\', ' ', '{"entity_id":1}', '"items":[]'));

  it('is never more lenient than JSON.parse: where an answer is not JSON, some piece it cuts is not either', () => {
    let placedInvalid = 0;
    fc.assert(
      fc.property(answer, fc.nat(), fc.boolean(), edit, (value, at, nextToAnOrder, change) => {
        const text = encoder.encode(JSON.stringify(value));
        // Half the time where the orders meet each other or the array's brackets, where the scan checks the separators.
        const placed = nextToAnOrder ? placeOrders(text) : undefined;
        const edges = placed ? placed.starts.flatMap((start, i) => [start, placed.ends[i]!]) : [];
        const where = edges.length > 0 ? edges[at % edges.length]! : at % text.length;
        let bytes: Uint8Array;
        if (typeof change === 'number') {
          bytes = text;
          bytes[where] = change;
        } else {
          bytes = new Uint8Array([...text.subarray(0, where), ...encoder.encode(change), ...text.subarray(where)]);
        }
        const places = placeOrders(bytes);
        if (places === undefined) return;
        let wholeParses = true;
        try {
          JSON.parse(decoder.decode(bytes));
        } catch {
          wholeParses = false;
        }
        let piecesParse = true;
        try {
          pieces(bytes, places);
        } catch {
          piecesParse = false;
        }
        expect(piecesParse).toBe(wholeParses);
        if (!wholeParses) placedInvalid += 1;
      }),
      { numRuns: 4_000 },
    );
    // The byte changed broke the JSON without changing where the orders are (inside an order, mostly) often enough to tell.
    expect(placedInvalid).toBeGreaterThan(100);
  });
});

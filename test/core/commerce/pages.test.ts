import { describe, expect, it } from 'vitest';
import { CommerceError } from '../../../src/core/commerce/errors.js';
import { orderPages, type SearchSource } from '../../../src/core/commerce/pages.js';
import { answerOf } from '../../../src/core/commerce/search-answer.js';
import type { CommerceOrder, CommerceSearchResult } from '../../../src/core/commerce/schemas.js';
import type { SearchRequest } from '../../../src/core/commerce/search.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * A platform reduced to its entity_ids, answering `entity_id gt N` searches in the order they were
 * sent, with new orders created just before chosen searches (shoppers checking out during the run).
 */
function platform(ids: number[], createdBefore: Map<number, number[]>, quirks: PlatformQuirks = {}): SearchSource & { searches: () => number; pageSizes: number[] } {
  let searches = 0;
  const pageSizes: number[] = [];
  return {
    searches: () => searches,
    pageSizes,
    maxPageSize: undefined,
    logger: silent,
    async fetchSearch(request) {
      ids.push(...(createdBefore.get(++searches) ?? []));
      pageSizes.push(request.pageSize!);
      const after = Number(request.groups.flat().find((f) => f.field === 'entity_id')?.value ?? 0);
      const matches = ids.filter((id) => (quirks.inclusive ? id >= after : id > after));
      const count = Math.min(request.pageSize!, quirks.cap ?? Infinity, quirks.shortAnswers?.get(searches) ?? Infinity);
      const answered = matches.slice(0, count);
      if (quirks.repeatsSecond && answered.length > 1) answered.splice(2, 0, answered[1]!);
      const result = { items: answered.map((id) => ({ entity_id: id }) as CommerceOrder), total_count: matches.length, search_criteria: { filter_groups: [] } };
      return { status: 200, ok: true, headers: { get: () => null }, body: new TextEncoder().encode(JSON.stringify(result)) };
    },
    decodePage: (_request: SearchRequest, response) => answerOf(JSON.parse(new TextDecoder().decode(response.body)) as CommerceSearchResult),
  };
}

interface PlatformQuirks {
  /** Pages never longer than this, without saying so. */
  cap?: number;
  /** Search number → how many orders that answer holds (a total_count that raced a new order). */
  shortAnswers?: Map<number, number>;
  /** Applies `entity_id gt N` as `gteq`: the cursor's own order comes back again. */
  inclusive?: boolean;
  /** Answers the second order of a page twice. */
  repeatsSecond?: boolean;
}

/**
 * The platform's answers read into the paging's buffers, as node:http does, and each order parsed from them when it
 * is reached, as OrderReader does: a buffer filled again too early hands over another answer's orders.
 */
function intoBodies(quiet: SearchSource): { source: SearchSource; buffers: Set<ArrayBufferLike> } {
  const buffers = new Set<ArrayBufferLike>();
  const decode = (body: Uint8Array) => JSON.parse(new TextDecoder().decode(body)) as CommerceSearchResult;
  const source: SearchSource = {
    ...quiet,
    async fetchSearch(request, signal, bodies) {
      const answer = await quiet.fetchSearch(request, signal);
      await new Promise((resolve) => setTimeout(resolve, 1)); // the answer arrives while the consumer is at work
      const room = bodies ? bodies.take(answer.body.length) : new Uint8Array(answer.body.length);
      room.set(answer.body);
      buffers.add(room.buffer);
      return { ...answer, body: room.subarray(0, answer.body.length) };
    },
    decodePage(_request, response) {
      const result = decode(response.body);
      return { ids: result.items.map((order) => order.entity_id), total_count: result.total_count, order: (i) => decode(response.body).items[i]! };
    },
  };
  return { source, buffers };
}

async function handedOver(source: SearchSource, pageSize: number, prefetch: number): Promise<number[]> {
  const ids: number[] = [];
  for await (const page of orderPages(source, {}, { pageSize, prefetch })) for (const order of page.orders()) ids.push(order.entity_id);
  return ids;
}

describe('orderPages', () => {
  it('hands each order over once when orders created during the run move the cursor past the key due next', async () => {
    // Found by a fuzzer: the second answer grows total_count, the cursor jumps to 6 while the next key
    // ahead was still 4, and the request sent from 4 used to move the cursor back and repeat order 6.
    const ids = await handedOver(platform([2, 6], new Map([[2, [18, 23]]])), 1, 2);
    expect(ids).toEqual([2, 6, 18, 23]);
  });

  it('spaces the requests ahead by the density of the latest answer, not the first page’s only', async () => {
    // 100 consecutive ids, then 2,000 spaced 50 apart: spaced by the first page, every request ahead
    // covered 100 ids (two orders) of the sparse stretch, about 900 searches instead of about 21.
    const ids = [...Array.from({ length: 100 }, (_, i) => i + 1), ...Array.from({ length: 2_000 }, (_, i) => 100 + 50 * (i + 1))];
    const source = platform([...ids], new Map());
    expect(await handedOver(source, 100, 6)).toEqual(ids);
    expect(source.searches()).toBeLessThan(40);
  });

  it('hands over every order of a quiet platform once, whatever the page size and the requests ahead', async () => {
    const all = [1, 2, 3, 7, 8, 20, 21, 22, 40, 41, 90, 91, 92, 93, 200];
    for (const pageSize of [1, 2, 3, 5]) {
      for (const prefetch of [1, 2, 4]) {
        expect([pageSize, prefetch, await handedOver(platform([...all], new Map()), pageSize, prefetch)]).toEqual([pageSize, prefetch, all]);
      }
    }
  });

  it('takes two short pages of one length in a row, not one, for a page-size cap it does not announce', async () => {
    const all = Array.from({ length: 500 }, (_, i) => i + 1);
    // One short answer (a count that raced an order placed meanwhile): the page size stays.
    const raced = platform([...all], new Map(), { shortAnswers: new Map([[1, 60]]) });
    expect(await handedOver(raced, 100, 1)).toEqual(all);
    expect(raced.pageSizes.slice(0, 3)).toEqual([100, 100, 100]);
    // Every answer 60 long: from the second on, it pages with 60 (the request sent ahead meanwhile still asked for 100).
    const capped = platform([...all], new Map(), { cap: 60 });
    expect(await handedOver(capped, 100, 1)).toEqual(all);
    expect(capped.pageSizes.slice(0, 5)).toEqual([100, 100, 100, 60, 60]);
  });

  it('hands each order over once from a platform that answers the cursor\'s own order again', async () => {
    const all = [1, 2, 3, 7, 8, 20, 21, 22, 40, 41, 90];
    expect(await handedOver(platform([...all], new Map(), { inclusive: true }), 3, 2)).toEqual(all);
  });

  it('refuses a page that repeats an order: it is not sorted by entity_id as asked', async () => {
    await expect(handedOver(platform([1, 2, 3], new Map(), { repeatsSecond: true }), 10, 1)).rejects.toMatchObject({ code: 'UPSTREAM_INVALID_RESPONSE', message: expect.stringContaining('(2 before 2)') });
  });

  it('reads its answers into buffers it gives back once each page is handed over, and never refills one still to be read', async () => {
    const all = Array.from({ length: 1_000 }, (_, i) => i + 1);
    const { source, buffers } = intoBodies(platform([...all], new Map()));
    const ids: number[] = [];
    for await (const page of orderPages(source, {}, { pageSize: 10, prefetch: 4 })) {
      for (const order of page.orders()) {
        ids.push(order.entity_id);
        await new Promise((resolve) => setImmediate(resolve)); // an onOrder that writes somewhere
      }
    }
    expect(ids).toEqual(all);
    expect(buffers.size).toBeLessThanOrEqual(8); // 100 answers, read into the buffers of the 4 in flight and a few more
  });

  it('refuses a number of requests ahead outside 1 to 16', async () => {
    for (const prefetch of [0, 17, 1.5]) {
      await expect(handedOver(platform([1], new Map()), 10, prefetch)).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'prefetch' } });
    }
  });

  it('gives up at once on a page-size refusal naming a cap no smaller than the size it asked for, instead of asking again for ever', async () => {
    for (const cap of [100, 300]) {
      const source = platform([1, 2, 3], new Map());
      source.fetchSearch = async (request) => {
        // A loop that asks again would never give the test's timer a turn: stop it here.
        if (source.pageSizes.push(request.pageSize!) > 3) throw new Error('asked again and again');
        throw new CommerceError('COMMERCE_ERROR', `capped at ${cap}`, { upstreamStatus: 400, details: { maxPageSize: cap } });
      };
      await expect(handedOver(source, 100, 1)).rejects.toThrow(`capped at ${cap}`);
      expect(source.pageSizes).toEqual([100]);
    }
  });
});

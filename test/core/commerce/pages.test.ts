import { describe, expect, it } from 'vitest';
import { orderPages, type SearchSource } from '../../../src/core/commerce/pages.js';
import type { CommerceOrder, CommerceSearchResult } from '../../../src/core/commerce/schemas.js';
import type { SearchRequest } from '../../../src/core/commerce/search.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * A platform reduced to its entity_ids, answering `entity_id gt N` searches in the order they were
 * sent, with new orders created just before chosen searches (shoppers checking out during the run).
 */
function platform(ids: number[], createdBefore: Map<number, number[]>): SearchSource & { searches: () => number } {
  let searches = 0;
  return {
    searches: () => searches,
    maxPageSize: undefined,
    logger: silent,
    async fetchSearch(request) {
      ids.push(...(createdBefore.get(++searches) ?? []));
      const after = Number(request.groups.flat().find((f) => f.field === 'entity_id')?.value ?? 0);
      const matches = ids.filter((id) => id > after);
      const result = { items: matches.slice(0, request.pageSize).map((id) => ({ entity_id: id }) as CommerceOrder), total_count: matches.length, search_criteria: { filter_groups: [] } };
      return { status: 200, ok: true, headers: { get: () => null }, body: new TextEncoder().encode(JSON.stringify(result)) };
    },
    decodeSearch: (_request: SearchRequest, response) => JSON.parse(new TextDecoder().decode(response.body)) as CommerceSearchResult,
  };
}

async function handedOver(source: SearchSource, pageSize: number, prefetch: number): Promise<number[]> {
  const ids: number[] = [];
  for await (const page of orderPages(source, {}, { pageSize, prefetch })) ids.push(...page.items.map((order) => order.entity_id));
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
});

import type { CommerceOrder, CommerceSearchResult } from './schemas.js';

/** A search answer as the paging reads it: the ids of its orders now, each order when it is wanted. */
export interface SearchAnswer {
  /** Each order's entity_id, in the order answered. */
  ids: readonly number[];
  /** The order at that index, parsed and checked (UPSTREAM_INVALID_RESPONSE for one that is not an order). */
  order(index: number): CommerceOrder;
  total_count: number;
}

/** An answer parsed and checked whole, as a SearchAnswer. */
export function answerOf(result: CommerceSearchResult): SearchAnswer {
  return { ids: result.items.map((order) => order.entity_id), order: (index) => result.items[index]!, total_count: result.total_count };
}

/** Where an answer's error keeps the part of it that could be used (its orders before the first bad one). */
const VALID_PART = Symbol('paywidget.validPart');

/** Keeps, on the error of an answer that failed validation, the part of it before its first bad order. */
export function keepValidPart(error: unknown, part: CommerceSearchResult): void {
  if (typeof error === 'object' && error !== null) Object.defineProperty(error, VALID_PART, { value: part });
}

/** The part keepValidPart kept on an error, as an answer of its own. */
export function validPartOf(error: unknown): SearchAnswer | undefined {
  const part = (error as { [VALID_PART]?: CommerceSearchResult } | null)?.[VALID_PART];
  return part && answerOf(part);
}

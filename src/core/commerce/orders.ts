import type { z } from 'zod';
import { invalidInput, PayError } from '../errors.js';
import type { Logger } from '../types.js';
import type { CommerceClient } from './client.js';
import { CommerceError, commerceFailure, commerceJson, isNoRoute, isUnknownStore, readMagentoError, type MagentoErrorBody } from './errors.js';
import { orderSchema, orderSearchResultSchema, type CommerceOrder, type CommerceSearchResult } from './schemas.js';
import type { UpstreamResponse } from '../http.js';
import type { BodyBuffers } from '../transport/body-buffers.js';
import { ResponseTooLargeError } from '../transport/limit.js';
import { compileGuard } from './schema-guard.js';
import { orderPages, DEFAULT_PAGE_SIZE, type OrderPage, type PageOptions } from './pages.js';
import { answerOf, keepValidPart, type SearchAnswer } from './search-answer.js';
import { placeOrders } from './order-places.js';
import { buildSearch, echoMismatch, normalizeFilter, searchQuery, type OrderFilter, type OrderSearch, type SearchRequest } from './search.js';
import { describeKind } from '../option-types.js';

/** Options of `pay.orders.iterate()`: the filter, and how it pages. */
export interface OrderIterateOptions extends OrderFilter {
  /** Orders per page (default 100; lowered automatically to a platform's cap). */
  pageSize?: number | undefined;
  /** Pages fetched ahead while the current one is consumed (default 6; 1 = one at a time). */
  prefetch?: number | undefined;
  /** Stops the iteration before the next order (it throws the signal's reason, as fetch does) and cancels the pages in flight. */
  signal?: AbortSignal | undefined;
}

/** `items[3] (entity_id 157).grand_total: expected number` for the first few issues: a page's order named by its id. */
function describeIssues(error: z.ZodError, value: unknown): string {
  const items = (value as { items?: unknown } | null)?.items;
  const shown = error.issues.slice(0, 3).map((issue) => {
    const path = issue.path.reduce<string>((acc, key, i) => {
      if (typeof key !== 'number') return acc ? `${acc}.${String(key)}` : String(key);
      const id = i === 1 && issue.path[0] === 'items' && Array.isArray(items) ? (items[key] as { entity_id?: unknown } | undefined)?.entity_id : undefined;
      return `${acc}[${key}]${typeof id === 'number' ? ` (entity_id ${id})` : ''}`;
    }, '');
    return `${path || '(root)'}: ${issue.message}`;
  });
  const more = error.issues.length > 3 ? ` (and ${error.issues.length - 3} more)` : '';
  return shown.join('; ') + more;
}

function invalidResponse(what: string, error: z.ZodError, value: unknown): PayError {
  const paths = error.issues.map((i) => i.path.map(String).join('.'));
  // A search stops at the page every time, so say which order to fix.
  const fix = paths.some((path) => path.startsWith('items.')) ? ' Fix that order on the platform: every search, iteration or sync stops at it until then.' : '';
  return new PayError('UPSTREAM_INVALID_RESPONSE', `The commerce platform's ${what} does not match the Order Retrieval API: ${describeIssues(error, value)}.${fix}`, {
    details: { service: 'commerce', paths: paths.slice(0, 10) },
  });
}

const textDecoder = new TextDecoder();
const isOrder = compileGuard(orderSchema);
const isSearchResult = compileGuard(orderSearchResultSchema);

/** The value itself when the guard accepts it (zod's copy would equal it); otherwise zod's parse, for its error. */
function validate<T>(value: unknown, guard: (value: unknown) => boolean, schema: z.ZodType, what: string): T {
  if (guard(value)) return value as T;
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw invalidResponse(what, parsed.error, value);
  return parsed.data as T;
}

/** A search answer cut before its first order that fails validation; undefined when the rest of it fails too. */
function validPart(value: unknown): CommerceSearchResult | undefined {
  const items = (value as { items?: unknown } | null)?.items;
  if (!Array.isArray(items)) return undefined;
  const bad = items.findIndex((item) => !isOrder(item));
  const part = { ...(value as object), items: items.slice(0, bad === -1 ? items.length : bad) };
  return isSearchResult(part) ? (part as CommerceSearchResult) : undefined;
}

/** An entity_id as text: 1 to 15 digits, no leading zero. */
export const ENTITY_ID_TEXT = /^[1-9][0-9]{0,14}$/;
/** Zero-padded, as Magento writes increment_ids ("000000007"): read as an entity_id, one would name another order. */
export const ZERO_PADDED = /^0+[0-9]/;

/** A positive integer entity_id from a number or a string of digits. */
export function toEntityId(value: unknown, field = 'entityId'): number {
  const text = typeof value === 'string' ? value.trim() : undefined;
  if (text !== undefined && ZERO_PADDED.test(text)) {
    throw invalidInput(field, `${field} must be the order's entity_id; ${JSON.stringify(text.slice(0, 40))} has a leading zero, as an increment_id has (the order number shoppers see). Send the entity_id, a positive integer without leading zeros, or find the order with orders.search({ incrementId: '${text.slice(0, 40)}' }).`);
  }
  const n = typeof value === 'number' ? value : text !== undefined && ENTITY_ID_TEXT.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw invalidInput(field, `${field} must be the order's entity_id, a positive integer (got ${shownEntityId(value)}).`);
  }
  return n;
}

/** What was sent instead of an entity_id: String() would show [1] as 1, an object as [object Object], and a number past 2^53 rounded. */
function shownEntityId(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 40));
  if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value)) return 'a number above 2^53 - 1, past which JavaScript rounds integers';
  return typeof value === 'number' ? String(value) : describeKind(value);
}

export class OrderReader {
  /** A page-size cap learned from the platform, used from then on. */
  maxPageSize: number | undefined;

  constructor(
    private readonly client: CommerceClient,
    readonly logger: Logger,
  ) {}

  async get(entityId: number | string, options?: { signal?: AbortSignal | undefined }): Promise<CommerceOrder> {
    const id = toEntityId(entityId);
    const response = await this.client.read(`/orders/${id}`, undefined, options?.signal);
    if (response.status === 404) {
      const body = readMagentoError(response);
      // A 404 without Magento's body, or with its "no route" or "no such store" body, is a wrong URL or scope,
      // not a missing order. Answered to the browser as it is (404): the platform's words stay in `body`, whose
      // parameters could quote customer data.
      if (body && !isNoRoute(body) && !isUnknownStore(body)) throw orderNotFound(id, body);
    }
    if (!response.ok) throw commerceFailure(`the read of order ${id}`, response);
    const order = validate<CommerceOrder>(commerceJson(response, `the read of order ${id}`), isOrder, orderSchema, `order ${id}`);
    // A proxy or cache answering with another order would have it charged or synced in this one's place.
    if (order.entity_id !== id) {
      throw new PayError('UPSTREAM_INVALID_RESPONSE', `The commerce platform answered the read of order ${id} with order ${order.entity_id}; a cache or proxy in front of it may be mixing up answers.`, { details: { service: 'commerce', entityId: id } });
    }
    return order;
  }

  async search(query: OrderSearch = {}): Promise<CommerceSearchResult> {
    // Magento answers every match when no page size is sent: one page is what a search means here.
    const request = buildSearch(normalizeFilter(query), query.pageSize ?? DEFAULT_PAGE_SIZE, query.currentPage);
    return this.decodeSearch(request, await this.fetchSearch(request, query.signal));
  }

  /** The raw answer of a search: it waits its turn in the prefetch queue as bytes, off the JS heap (in one of `bodies`, if given). */
  async fetchSearch(request: SearchRequest, signal?: AbortSignal, bodies?: BodyBuffers): Promise<UpstreamResponse> {
    let response: UpstreamResponse;
    try {
      response = await this.client.read('/orders', searchQuery(request), signal, bodies);
    } catch (error) {
      throw tooLargeAPage(error, request.pageSize);
    }
    if (!response.ok) throw commerceFailure('an order search', response);
    return response;
  }

  /** Parses, validates and checks the echo of a search answer, whole. */
  decodeSearch(request: SearchRequest, response: UpstreamResponse): CommerceSearchResult {
    const value = commerceJson(response, 'an order search');
    let result: CommerceSearchResult;
    try {
      result = validate<CommerceSearchResult>(value, isSearchResult, orderSearchResultSchema, 'order search result');
    } catch (error) {
      // The orders before the first one that cannot be used are fine: the iteration hands them over before it stops.
      const valid = validPart(value);
      if (valid && !echoMismatch(request, valid.search_criteria)) keepValidPart(error, valid);
      throw error;
    }
    const mismatch = echoMismatch(request, result.search_criteria);
    if (mismatch) {
      throw new PayError('UPSTREAM_INVALID_RESPONSE', `The commerce platform did not apply the search as sent: ${mismatch}. Its orders were not used.`, { details: { service: 'commerce' } });
    }
    return result;
  }

  /**
   * A search answer for the paging: its envelope (echo, total) parsed and checked now, each order when it
   * is reached (see order-places.ts). An answer of another shape, or one that fails, is read whole by
   * decodeSearch, so that its error (and the orders before a bad one) are what they are for a search.
   */
  decodePage(request: SearchRequest, response: UpstreamResponse): SearchAnswer {
    const readWhole = () => answerOf(this.decodeSearch(request, response));
    const bytes = response.body;
    const places = placeOrders(bytes);
    if (places === undefined) return readWhole();
    let envelope: unknown;
    try {
      envelope = JSON.parse(textDecoder.decode(bytes.subarray(0, places.beforeItems)) + textDecoder.decode(bytes.subarray(places.afterItems)));
    } catch {
      return readWhole();
    }
    if (!isSearchResult(envelope)) return readWhole();
    const { items, search_criteria: echo, total_count } = envelope as CommerceSearchResult;
    // Orders left in the envelope mean `items` was written twice, the last time with an escape (JSON.parse keeps that one).
    if (items.length > 0 || echoMismatch(request, echo)) return readWhole();
    const { starts, ends, ids } = places;
    const order = (index: number): CommerceOrder => {
      let value: unknown;
      try {
        value = JSON.parse(textDecoder.decode(bytes.subarray(starts[index], ends[index])));
      } catch {
        value = undefined;
      }
      // One that fails is read again with the whole answer, whose error (naming it) is the one a search throws.
      const parsed = isOrder(value) ? (value as CommerceOrder) : this.decodeSearch(request, response).items[index]!;
      if (parsed.entity_id !== ids[index]) {
        throw new PayError('UPSTREAM_INVALID_RESPONSE', `The commerce platform answered an order search with an order whose entity_id is written twice (${ids[index]} and ${parsed.entity_id}); which order it is cannot be told, so it stops there.`, { details: { service: 'commerce' } });
      }
      return parsed;
    };
    return { ids, order, total_count };
  }

  /** Every matching order's page, entity_id ascending, read by key (see orderPages). */
  pages(filter: OrderFilter, options: PageOptions = {}): AsyncGenerator<OrderPage> {
    return orderPages(this, filter, options);
  }

  /**
   * An abort ends the iteration before the next order (not after the pages already fetched), with the
   * signal's reason, as fetch does: a loop cut short must not pass for a complete one.
   */
  async *iterate(options: OrderIterateOptions = {}): AsyncGenerator<CommerceOrder> {
    const { pageSize, prefetch, signal, ...filter } = options;
    try {
      for await (const page of this.pages(filter, { pageSize, prefetch, signal })) {
        for (const order of page.orders()) {
          signal?.throwIfAborted();
          yield order;
        }
      }
    } catch (error) {
      signal?.throwIfAborted(); // the page in flight was cancelled, as asked: not an upstream failure
      throw error;
    }
  }
}

/** A page past the most an answer may hold says what to change: the page size (the platform's orders may be large). */
function tooLargeAPage(error: unknown, pageSize: number | undefined): unknown {
  if (!(error instanceof PayError && error.cause instanceof ResponseTooLargeError)) return error;
  return new PayError(error.code, `${error.message} Ask for fewer orders a page: pageSize (the CLI's --page-size) is ${pageSize ?? 'not set'}.`, { cause: error.cause, details: error.details });
}

/** ORDER_NOT_FOUND (404): what a missing order answers, and one the shopper may not pay (authorizeOrder), alike. */
export function orderNotFound(id: number, body?: MagentoErrorBody): CommerceError {
  return new CommerceError('ORDER_NOT_FOUND', `Order ${id} was not found on the commerce platform.`, { upstreamStatus: 404, body, details: { entityId: id } });
}

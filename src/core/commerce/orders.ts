import type { z } from 'zod';
import { PayError } from '../errors.js';
import type { Logger } from '../types.js';
import type { CommerceClient } from './client.js';
import { CommerceError, commerceFailure, describeMagentoError, readMagentoError } from './errors.js';
import { orderSchema, orderSearchResultSchema, type CommerceOrder, type CommerceSearchResult } from './schemas.js';
import type { UpstreamResponse } from '../http.js';
import { buildSearch, echoMismatch, normalizeFilter, searchQuery, type NormalizedFilter, type OrderFilter, type OrderSearch, type SearchRequest } from './search.js';

export interface OrderIterateOptions extends OrderFilter {
  /** Orders per page (default 100; lowered automatically to a platform's cap). */
  pageSize?: number;
  /** Pages fetched ahead while the current one is consumed (default 3; 1 = one at a time). */
  prefetch?: number;
  /** Stops the iteration and cancels the pages in flight. */
  signal?: AbortSignal;
}

/** One page as the iterator hands it to the sync: new orders only, in entity_id order. */
export interface OrderPage {
  items: CommerceOrder[];
  /** The platform's `total_count` on this page. */
  totalCount: number;
  page: number;
  pageSize: number;
}

export const DEFAULT_PAGE_SIZE = 100;

/** One trip through the event loop, so requests just started reach the socket before a long parse. */
const turn = () => new Promise<void>((resolve) => (typeof setImmediate === 'function' ? setImmediate(resolve) : setTimeout(resolve, 0)));
export const DEFAULT_PREFETCH = 3;

/** `items[3].grand_total: expected number` for the first few issues. */
function describeIssues(error: z.ZodError): string {
  const shown = error.issues.slice(0, 3).map((issue) => {
    const path = issue.path.reduce<string>((acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : acc ? `${acc}.${String(key)}` : String(key)), '');
    return `${path || '(root)'}: ${issue.message}`;
  });
  const more = error.issues.length > 3 ? ` (and ${error.issues.length - 3} more)` : '';
  return shown.join('; ') + more;
}

function invalidResponse(what: string, error: z.ZodError): PayError {
  const paths = error.issues.map((i) => i.path.map(String).join('.'));
  return new PayError('UPSTREAM_INVALID_RESPONSE', `The commerce platform's ${what} does not match the Order Retrieval API: ${describeIssues(error)}.`, {
    details: { service: 'commerce', paths: paths.slice(0, 10) },
  });
}

/** A positive integer entity_id from a number or a string of digits. */
export function toEntityId(value: unknown, field = 'entityId'): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^[0-9]{1,15}$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new PayError('INVALID_INPUT', `${field} must be the order's entity_id, a positive integer (got ${typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : String(value)}).`, { details: { field } });
  }
  return n;
}

export class OrderReader {
  /** A page-size cap learned from the platform, used from then on. */
  maxPageSize: number | undefined;

  constructor(
    private readonly client: CommerceClient,
    private readonly logger: Logger,
  ) {}

  async get(entityId: number | string): Promise<CommerceOrder> {
    const id = toEntityId(entityId);
    const response = await this.client.read(`/orders/${id}`, undefined);
    if (response.status === 404) {
      const body = readMagentoError(response);
      // A 404 without Magento's body is a wrong URL, not a missing order.
      if (body) throw new CommerceError('ORDER_NOT_FOUND', `Order ${id} was not found on the commerce platform (${describeMagentoError(body)}).`, { upstreamStatus: 404, body, details: { entityId: id } });
    }
    if (!response.ok) throw commerceFailure(`the read of order ${id}`, response);
    const parsed = orderSchema.safeParse(this.client.json(response, `the read of order ${id}`));
    if (!parsed.success) throw invalidResponse(`order ${id}`, parsed.error);
    return parsed.data as CommerceOrder;
  }

  async search(query: OrderSearch = {}): Promise<CommerceSearchResult> {
    // Magento answers every match when no page size is sent: one page is what a search means here.
    return this.searchNormalized(normalizeFilter(query), query.pageSize ?? DEFAULT_PAGE_SIZE, query.currentPage);
  }

  async searchNormalized(filter: NormalizedFilter, pageSize?: number, currentPage?: number, signal?: AbortSignal): Promise<CommerceSearchResult> {
    const request = buildSearch(filter, pageSize, currentPage);
    return this.decodeSearch(request, await this.fetchSearch(request, signal));
  }

  /** The raw answer of a search: it waits its turn in the prefetch queue as bytes, off the JS heap. */
  private async fetchSearch(request: SearchRequest, signal?: AbortSignal): Promise<UpstreamResponse> {
    const response = await this.client.read('/orders', searchQuery(request), signal);
    if (!response.ok) throw commerceFailure('an order search', response);
    return response;
  }

  /** Parses, validates and checks the echo of a search answer. */
  private decodeSearch(request: SearchRequest, response: UpstreamResponse): CommerceSearchResult {
    const parsed = orderSearchResultSchema.safeParse(this.client.json(response, 'an order search'));
    if (!parsed.success) throw invalidResponse('order search result', parsed.error);
    const mismatch = echoMismatch(request, parsed.data.search_criteria);
    if (mismatch) {
      throw new PayError('UPSTREAM_INVALID_RESPONSE', `The commerce platform did not apply the search as sent: ${mismatch}. Its orders were not used.`, { details: { service: 'commerce' } });
    }
    return parsed.data as CommerceSearchResult;
  }

  /**
   * Every matching order's page, entity_id ascending. The first page is fetched alone (it tells the
   * total and any page-size cap), then up to `prefetch` pages at once, handed over in order. Ends
   * on a short page or once `total_count` is reached; orders at or below the last entity_id seen are
   * dropped, so a platform that answers the last page again past the end delivers nothing twice.
   */
  async *pages(filterInput: OrderFilter, options: Omit<OrderIterateOptions, keyof OrderFilter> = {}): AsyncGenerator<OrderPage> {
    const filter = normalizeFilter(filterInput);
    const prefetch = options.prefetch ?? DEFAULT_PREFETCH;
    if (!Number.isSafeInteger(prefetch) || prefetch < 1 || prefetch > 16) {
      throw new PayError('INVALID_INPUT', `prefetch must be an integer from 1 to 16 (got ${String(prefetch)}).`, { details: { field: 'prefetch' } });
    }
    let size = Math.min(buildSearch({}, options.pageSize ?? DEFAULT_PAGE_SIZE).pageSize!, this.maxPageSize ?? Infinity);
    const controller = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, controller.signal]) : controller.signal;
    let lastId = filter.afterEntityId ?? 0;
    /** The orders past the last one handed over; a page out of entity_id order would lose orders, so it is refused. */
    const fresh = (items: CommerceOrder[]) => {
      const out: CommerceOrder[] = [];
      for (let i = 0; i < items.length; i++) {
        const order = items[i]!;
        if (i > 0 && order.entity_id <= items[i - 1]!.entity_id) {
          throw new PayError('UPSTREAM_INVALID_RESPONSE', `The commerce platform answered a page not sorted by entity_id ascending (${items[i - 1]!.entity_id} before ${order.entity_id}), although the search asked for it; paging through it could skip orders.`, { details: { service: 'commerce' } });
        }
        if (order.entity_id <= lastId) continue;
        lastId = order.entity_id;
        out.push(order);
      }
      return out;
    };

    let first: CommerceSearchResult;
    for (;;) {
      try {
        first = await this.searchNormalized(filter, size, 1, signal);
        break;
      } catch (error) {
        const cap = error instanceof CommerceError ? error.maxPageSize : undefined;
        if (cap === undefined || cap >= size) throw error;
        this.logger.warn({ service: 'commerce', pageSize: size, maxPageSize: cap }, 'commerce platform caps the page size; using its maximum');
        this.maxPageSize = cap;
        size = cap;
      }
    }
    let total = first.total_count;
    yield { items: fresh(first.items), totalCount: total, page: 1, pageSize: size };
    if (first.items.length < size || size >= total) return;

    // Up to `prefetch` pages are in flight at any time, the next one sent as soon as one arrives; each is
    // parsed only when its turn comes, so one page of orders at most is on the heap, the others wait as bytes.
    const queue: Array<{ page: number; request: SearchRequest; raw: Promise<UpstreamResponse> }> = [];
    let next = 2;
    /** Sends requests until `prefetch` are in flight; true when it sent any. */
    const fill = () => {
      const before = next;
      while (queue.length < prefetch && (next - 1) * size < total) {
        const request = buildSearch(filter, size, next);
        const raw = this.fetchSearch(request, signal);
        raw.catch(() => {}); // awaited in turn below; this only keeps an early failure from going unhandled
        queue.push({ page: next, request, raw });
        next += 1;
      }
      return next !== before;
    };
    try {
      for (;;) {
        fill();
        const head = queue.shift();
        if (!head) return;
        const raw = await head.raw;
        if (fill()) await turn(); // the head has arrived: its slot goes to the next page, sent before this one is parsed
        const result = this.decodeSearch(head.request, raw);
        total = result.total_count;
        const items = fresh(result.items);
        yield { items, totalCount: total, page: head.page, pageSize: size };
        if (result.items.length < size || head.page * size >= total || items.length === 0) return;
      }
    } finally {
      controller.abort();
    }
  }

  async *iterate(options: OrderIterateOptions = {}): AsyncGenerator<CommerceOrder> {
    const { pageSize, prefetch, signal, ...filter } = options;
    for await (const page of this.pages(filter, { pageSize, prefetch, signal })) yield* page.items;
  }
}

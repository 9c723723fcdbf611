import { invalidInput, PayError } from '../errors.js';
import type { UpstreamResponse } from '../http.js';
import { BodyBuffers } from '../transport/body-buffers.js';
import type { Logger } from '../types.js';
import { CommerceError } from './errors.js';
import type { CommerceOrder } from './schemas.js';
import { validPartOf, type SearchAnswer } from './search-answer.js';
import { buildSearch, normalizeFilter, type NormalizedFilter, type OrderFilter, type SearchRequest } from './search.js';

/** One page as the iterator hands it to the sync: new orders only, in entity_id order. */
export interface OrderPage {
  /** How many orders it hands over. */
  size: number;
  /** Its orders, each parsed and checked as it is reached (see order-places.ts). */
  orders(): Generator<CommerceOrder>;
  /** The orders handed over so far plus the platform's count of those still ahead. */
  totalCount: number;
}

export interface PageOptions {
  pageSize?: number | undefined;
  prefetch?: number | undefined;
  signal?: AbortSignal | undefined;
}

/** What the paging needs of the order reader. */
export interface SearchSource {
  maxPageSize: number | undefined;
  readonly logger: Logger;
  /** With `bodies`, the answer is read into one of them, given back once its orders are handed over. */
  fetchSearch(request: SearchRequest, signal?: AbortSignal, bodies?: BodyBuffers): Promise<UpstreamResponse>;
  /** The answer's envelope is checked now (its echo of the search, its total); its orders as they are reached. */
  decodePage(request: SearchRequest, response: UpstreamResponse): SearchAnswer;
}

export const DEFAULT_PAGE_SIZE = 100;
/**
 * A request ahead goes out only when a page is taken, so the ones in flight must cover the
 * platform's latency while a page is parsed and handed over: with 3, bench/order-sync ran 25% slower.
 */
const DEFAULT_PREFETCH = 6;

/**
 * One trip through the event loop, so requests just started reach the socket before a long parse: setImmediate
 * where it works (setTimeout waits a millisecond at least). The edge runtime defines it as a stub that throws.
 */
// Read off globalThis: Next's edge build warns of any route importing a bare setImmediate, guarded or not.
let immediateWorks = typeof globalThis.setImmediate === 'function';
const turn = () => new Promise<void>((resolve) => {
  if (immediateWorks) {
    try {
      globalThis.setImmediate(resolve);
      return;
    } catch {
      immediateWorks = false;
    }
  }
  setTimeout(resolve, 0);
});

/**
 * Every matching order, entity_id ascending, read by key instead of by offset: each request asks for
 * the first page of orders after an entity_id (`entity_id gt N`). Offsets shift when an order leaves
 * the filter during the run (a pending order gets paid), and the order that moves onto a page already
 * read would be skipped; a key does not shift.
 *
 * To keep `prefetch` requests in flight, the ones ahead start at guessed keys, one page's worth of
 * entity_ids apart (measured across the first page's own ids). Each answer is used up to where the
 * next request starts; when a stretch holds more than a page, the gap is read before moving on. The
 * run ends on an answer that holds every match left (short, or all of `total_count`), so a platform
 * that answers the last page again past the end is never asked.
 */
export async function* orderPages(source: SearchSource, filterInput: OrderFilter, options: PageOptions = {}): AsyncGenerator<OrderPage> {
  const filter = normalizeFilter(filterInput);
  const prefetch = options.prefetch ?? DEFAULT_PREFETCH;
  if (!Number.isSafeInteger(prefetch) || prefetch < 1 || prefetch > 16) {
    throw invalidInput('prefetch', `prefetch must be an integer from 1 to 16 (got ${String(prefetch)}).`);
  }
  // The caller's signal, linked by hand (the edge runtime has no AbortSignal.any), and unlinked however the run ends.
  const controller = new AbortController();
  const caller = options.signal;
  const stopWithCaller = () => controller.abort(caller!.reason);
  if (caller?.aborted) stopWithCaller();
  else caller?.addEventListener('abort', stopWithCaller, { once: true });
  try {
    yield* pagesFrom(source, filter, prefetch, options.pageSize ?? DEFAULT_PAGE_SIZE, controller.signal);
  } finally {
    caller?.removeEventListener('abort', stopWithCaller);
    controller.abort(); // the requests still ahead are not wanted
  }
}

/** The pages of a run whose requests all go out under `signal`. */
async function* pagesFrom(source: SearchSource, filter: NormalizedFilter, prefetch: number, pageSize: number, signal: AbortSignal): AsyncGenerator<OrderPage> {
  const request = (after: number, size: number) => buildSearch({ ...filter, afterEntityId: after }, size, 1);

  /** Every match at or below `cursor` has been handed over. */
  let cursor = filter.afterEntityId ?? 0;
  let handedOver = 0;
  /**
   * The orders of an answer past the cursor (and up to `until`), refusing an answer out of order.
   * `done` runs once they have been read (or the reader stopped), or at once if there are none.
   */
  const take = (answer: SearchAnswer, until: number, done = () => {}): OrderPage => {
    const { ids } = answer;
    for (let i = 1; i < ids.length; i++) {
      if (ids[i]! <= ids[i - 1]!) {
        throw new PayError('UPSTREAM_INVALID_RESPONSE', `The commerce platform answered a page not sorted by entity_id ascending (${ids[i - 1]} before ${ids[i]}), although the search asked for it; paging through it could skip orders.`, { details: { service: 'commerce' } });
      }
    }
    // Ascending, so the orders wanted are one run of them.
    let from = 0;
    while (from < ids.length && ids[from]! <= cursor) from++;
    let to = from;
    while (to < ids.length && ids[to]! <= until) to++;
    const totalCount = handedOver + answer.total_count;
    handedOver += to - from;
    if (to === from) {
      done();
      return { size: 0, totalCount, *orders() {} };
    }
    // Read once: after `done`, the bytes the orders are parsed from may be filling with another answer.
    let read = false;
    return {
      size: to - from,
      totalCount,
      *orders() {
        if (read) throw new Error('paywidget-server: a page of orders is read once');
        read = true;
        try {
          for (let i = from; i < to; i++) yield answer.order(i);
        } finally {
          done();
        }
      },
    };
  };

  /** An answer with an order that cannot be used: the orders before it (up to `until`) are handed over, then its error. */
  const partBefore = (error: unknown, until: number): OrderPage | undefined => {
    const part = validPartOf(error);
    if (part === undefined) return undefined;
    const page = take(part, until);
    return page.size > 0 ? page : undefined;
  };

  // Answers are read into buffers given back as each page is handed over: see BodyBuffers.
  const bodies = new BodyBuffers();
  let answered: Awaited<ReturnType<typeof firstAnswer>>;
  try {
    answered = await firstAnswer(source, filter, cursor, pageSize, signal, bodies);
  } catch (error) {
    const before = partBefore(error, Infinity);
    if (before) yield before;
    throw error;
  }
  const { first, body } = answered;
  let { size } = answered;

  /**
   * The page size to go on with after an answer that is not the last. Two short ones of the same length in a
   * row are a cap the platform does not announce, kept for this run; one alone may be a total_count that
   * raced an order placed between the platform's SELECT and its COUNT.
   */
  let shortBefore: number | undefined;
  const sizeAfter = (count: number) => {
    if (count >= size) return size;
    const capped = count === shortBefore;
    shortBefore = count;
    if (!capped) return size;
    source.logger.warn({ service: 'commerce', pageSize: size, answered: count }, `commerce platform answered ${count} orders where ${size} were asked, with more left, twice: a page-size cap it does not announce; paging with ${count}`);
    return count;
  };

  yield take(first, Infinity, () => bodies.give(body));
  if (holdsTheRest(first)) return;
  size = sizeAfter(first.ids.length);

  const lastOf = (ids: readonly number[]) => ids[ids.length - 1]!;
  // Measured across a page's own ids, not from where it was asked: a filter whose first match lies far
  // past the cursor (createdFrom yesterday, ids from 120,000) would otherwise space the requests ahead
  // past the last match, where they come back empty and pages are read one by one. A page of one order
  // has no spread to measure: the distance from where it was asked is all there is.
  const spanOf = (ids: readonly number[], after: number) => {
    const n = ids.length;
    return Math.max(1, Math.ceil(n > 1 ? ((lastOf(ids) - ids[0]!) * size) / (n - 1) : ids[0]! - after));
  };
  let span = spanOf(first.ids, cursor);
  cursor = lastOf(first.ids);
  /** Requests start no further than the matches counted so far can reach. */
  let horizon = cursor + (Math.ceil(first.total_count / size) - 1) * span;

  type Ahead = { after: number; request: SearchRequest; raw: Promise<UpstreamResponse> };
  const send = (after: number): Ahead => {
    const search = request(after, size);
    const raw = source.fetchSearch(search, signal, bodies);
    raw.catch(() => {}); // awaited in turn below; this only keeps an early failure from going unhandled
    return { after, request: search, raw };
  };
  const queue: Ahead[] = [];
  let nextAfter = cursor;
  const fill = () => {
    while (queue.length < prefetch && nextAfter < horizon) {
      queue.push(send(nextAfter));
      nextAfter += span;
    }
  };

  for (;;) {
    fill();
    if (queue.length === 0) {
      // Past the horizon with matches still coming (orders created during the run): on from the cursor.
      nextAfter = cursor;
      queue.push(send(cursor));
      nextAfter += span;
    }
    const head = queue.shift()!;
    const raw = await head.raw;
    fill();
    await turn(); // the requests just queued reach the socket before this answer is parsed
    let result: SearchAnswer;
    try {
      result = source.decodePage(head.request, raw);
    } catch (error) {
      const before = partBefore(error, queue[0]?.after ?? Infinity);
      if (before) yield before;
      throw error;
    }
    const complete = holdsTheRest(result);
    if (!complete) size = sizeAfter(result.ids.length);
    // An answer whose first order lies past the next request's key found no match up to it: a stretch of ids
    // without one (old and new orders of a status, nothing between). The requests ahead in that stretch would
    // all answer the same orders, so this answer is taken whole, and the line starts again from its last order.
    const skipped = !complete && queue.length > 0 && result.ids.length > 0 && result.ids[0]! > queue[0]!.after;
    const until = complete || skipped ? Infinity : (queue[0]?.after ?? Infinity);
    const page = take(result, until, () => bodies.give(raw.body));
    // Measured again on every answer: ids dense on the first page and sparse later (or the reverse)
    // would otherwise have every request ahead cover a sliver, or overshoot, for the rest of the run.
    if (!complete) span = spanOf(result.ids, head.after);
    horizon = Math.max(horizon, head.after + Math.ceil(result.total_count / size) * span);
    if (page.size > 0) yield page;
    if (complete) return;
    const last = lastOf(result.ids);
    if (skipped) {
      queue.length = 0; // their answers, some already on the way, are not waited for
      cursor = last;
      nextAfter = cursor;
      horizon = Math.max(horizon, cursor + Math.ceil((result.total_count - result.ids.length) / size) * span);
      continue;
    }
    if (last < until) {
      // More than a page of matches before the next request starts: read the gap first.
      cursor = last;
      queue.unshift(send(cursor));
    } else {
      cursor = until;
    }
    // An answer taken with nothing queued behind it (until = Infinity) can move the cursor past the key
    // due next; a request from there would hand orders over again, so the next key starts past the cursor.
    nextAfter = Math.max(nextAfter, cursor + span);
  }
}

/**
 * Whether an answer holds every match left. Each request asks for the first page after a key, so its
 * total_count counts what is left; a short answer alone is not the end, since a platform may cap
 * pages without saying so (then the rest would be lost while the run reported itself complete).
 */
function holdsTheRest(answer: SearchAnswer): boolean {
  return answer.ids.length === 0 || answer.ids.length >= answer.total_count;
}

/** The first answer, alone: it tells the total and, through a 400, any page-size cap (then kept). */
async function firstAnswer(source: SearchSource, filter: NormalizedFilter, after: number, pageSize: number, signal: AbortSignal, bodies: BodyBuffers) {
  let size = Math.min(buildSearch({}, pageSize).pageSize!, source.maxPageSize ?? Infinity);
  for (;;) {
    const search = buildSearch({ ...filter, afterEntityId: after }, size, 1);
    try {
      const answer = await source.fetchSearch(search, signal, bodies);
      return { first: source.decodePage(search, answer), size, body: answer.body };
    } catch (error) {
      const cap = error instanceof CommerceError ? error.maxPageSize : undefined;
      if (cap === undefined || cap >= size) throw error;
      source.logger.warn({ service: 'commerce', pageSize: size, maxPageSize: cap }, 'commerce platform caps the page size; using its maximum');
      source.maxPageSize = cap;
      size = cap;
    }
  }
}

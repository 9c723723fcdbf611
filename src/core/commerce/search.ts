import { invalidInput } from '../errors.js';
import { isWellFormedText } from '../well-formed.js';
import type { CommerceSearchCriteria } from './schemas.js';

/** Which orders: by status and creation date. Every filter given must hold (each goes in its own filter group, and groups AND). */
export interface OrderFilter {
  /** `status` equal to this, or (an array) to any of these. */
  status?: string | readonly string[] | undefined;
  /** `created_at` at or after this instant: `YYYY-MM-DD HH:MM:SS` (the platform's UTC) or a Date (formatted in UTC). */
  createdFrom?: string | Date | undefined;
  /** `created_at` at or before this instant (inclusive, like Magento's `to`). */
  createdTo?: string | Date | undefined;
  /** Only orders whose `entity_id` is greater than this (resuming, or paging by key). */
  afterEntityId?: number | undefined;
  /**
   * Only orders new since `afterEntityId` or changed since `updatedFrom` (`updated_at` at or after it): how a
   * sync by status reads again, since an order can enter the status long after it was created.
   */
  newOrUpdated?: { afterEntityId: number; updatedFrom: string | Date } | undefined;
}

/** Options of `pay.orders.search()`: one page of the orders matching the filter. */
export interface OrderSearch extends OrderFilter {
  /** The order with this `increment_id`: the order number the shopper sees, e.g. '000000123'. */
  incrementId?: string | undefined;
  /** Orders per page (default 100: Magento itself would answer every match at once). */
  pageSize?: number | undefined;
  /** 1-based page number. */
  currentPage?: number | undefined;
  /** Stops the search (it rejects with the signal's reason, as fetch does). */
  signal?: AbortSignal | undefined;
}

export interface SentFilter {
  field: string;
  value: string;
  condition_type: string;
}

/** A search as sent: one filter group per filter, sorted by entity_id ascending. */
export interface SearchRequest {
  groups: SentFilter[][];
  pageSize: number | undefined;
  currentPage: number | undefined;
}

/** What a filter means after checking and formatting (dates as `YYYY-MM-DD HH:MM:SS`). */
export interface NormalizedFilter {
  status?: string | string[];
  createdFrom?: string;
  createdTo?: string;
  afterEntityId?: number;
  newOrUpdated?: { afterEntityId: number; updatedFrom: string };
  incrementId?: string;
}

const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;
const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/**
 * A Date in UTC, or a checked `YYYY-MM-DD HH:MM:SS` string, as the platform's timestamp format. The platform
 * keeps whole seconds, so a Date within a second is moved to the whole second on the bound's side: a lower
 * bound (`edge: 'from'`) up, else down. Cut down, `from 12:00:00.5` would take an order placed at 12:00:00.
 */
export function formatCommerceDate(value: string | Date, field = 'date', edge: 'from' | 'to' = 'to'): string {
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw invalidInput(field, `${field} is an invalid Date.`);
    const millisecond = value.getUTCMilliseconds();
    if (edge === 'from' && millisecond > 0) value = new Date(value.getTime() + 1000 - millisecond);
    const year = value.getUTCFullYear();
    if (year < 1000 || year > 9999) throw invalidInput(field, `${field} must be within the years 1000 to 9999.`);
    return `${year}-${pad(value.getUTCMonth() + 1)}-${pad(value.getUTCDate())} ${pad(value.getUTCHours())}:${pad(value.getUTCMinutes())}:${pad(value.getUTCSeconds())}`;
  }
  const match = typeof value === 'string' ? TIMESTAMP.exec(value) : null;
  if (!match) throw invalidInput(field, `${field} must be a Date or a string 'YYYY-MM-DD HH:MM:SS' in UTC (got ${JSON.stringify(value)}).`);
  const [y, mo, d, h, mi, s] = match.slice(1).map(Number) as [number, number, number, number, number, number];
  // As for a Date; Date.UTC would also read the years 0 to 99 as 1900 to 1999.
  if (y < 1000) throw invalidInput(field, `${field} must be within the years 1000 to 9999 (got ${JSON.stringify(value)}).`);
  const date = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  if (date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) {
    throw invalidInput(field, `${field} '${value}' is not a real date and time.`);
  }
  return value;
}

function positiveInteger(field: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) throw invalidInput(field, `${field} must be a positive integer (got ${String(value)}).`);
  return value;
}

/** Longer than any status code or order number a platform keeps (Magento's columns hold 32 and 50). */
const MAX_CODE_LENGTH = 255;

/** Whether an order could have `value` as its increment_id: what a search by increment_id accepts. */
export function isOrderNumber(value: string): boolean {
  return codeProblem(value) === undefined;
}

/**
 * A code sent as a filter value as it is: not blank, no surrounding space (it would match nothing, and the
 * run would report no orders as if none had the status), sendable as UTF-8, and of a plausible length (a
 * very long one would come back as the platform's 414 or 431, blamed on its URL).
 */
function codeProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') return 'must be a non-empty string';
  if (value.trim() !== value) return 'must not begin or end with whitespace';
  if (!isWellFormedText(value)) return 'must be well-formed text (it holds half of a UTF-16 surrogate pair)';
  if (value.length > MAX_CODE_LENGTH) return `must be at most ${MAX_CODE_LENGTH} characters (got ${value.length})`;
  return undefined;
}

const quoted = (value: unknown) => (typeof value === 'string' && value.length > 40 ? `${JSON.stringify(value.slice(0, 40))}…` : JSON.stringify(value));

function statusValue(value: unknown): string {
  const problem = codeProblem(value) ?? ((value as string).includes(',') ? 'must be one status code: pass several as an array' : undefined);
  if (problem) throw invalidInput('status', `status ${problem}, such as 'pending' (got ${quoted(value)}).`);
  return value as string;
}

/**
 * A set of statuses in one order, each once, and one status alone as itself, so the same set always
 * makes the same filter (and checkpoint): ['pending', 'pending'] and ['pending'] are 'pending'.
 */
export function statusSet(statuses: readonly string[]): string | string[] {
  const set = [...new Set(statuses)].sort();
  return set.length === 1 ? set[0]! : set;
}

export function normalizeFilter(filter: OrderFilter & Pick<OrderSearch, 'incrementId'> = {}): NormalizedFilter {
  if (typeof filter !== 'object' || filter === null) throw invalidInput('filter', 'The order filter must be an object.');
  const out: NormalizedFilter = {};
  if (filter.status !== undefined) {
    if (Array.isArray(filter.status)) {
      if (filter.status.length === 0) throw invalidInput('status', 'status must not be an empty array.');
      out.status = statusSet(filter.status.map(statusValue));
    } else {
      out.status = statusValue(filter.status);
    }
  }
  if (filter.createdFrom !== undefined) out.createdFrom = formatCommerceDate(filter.createdFrom, 'createdFrom', 'from');
  if (filter.createdTo !== undefined) out.createdTo = formatCommerceDate(filter.createdTo, 'createdTo', 'to');
  if (out.createdFrom && out.createdTo && out.createdFrom > out.createdTo) {
    throw invalidInput('createdFrom', `createdFrom (${out.createdFrom}) is after createdTo (${out.createdTo}): no order could match.`);
  }
  if (filter.afterEntityId !== undefined) {
    const after = filter.afterEntityId;
    if (typeof after !== 'number' || !Number.isSafeInteger(after) || after < 0) throw invalidInput('afterEntityId', `afterEntityId must be an integer of 0 or more (got ${String(after)}).`);
    out.afterEntityId = after;
  }
  if (filter.newOrUpdated !== undefined) {
    const { afterEntityId, updatedFrom } = filter.newOrUpdated ?? {};
    if (typeof afterEntityId !== 'number' || !Number.isSafeInteger(afterEntityId) || afterEntityId < 0) throw invalidInput('newOrUpdated', `newOrUpdated.afterEntityId must be an integer of 0 or more (got ${String(afterEntityId)}).`);
    out.newOrUpdated = { afterEntityId, updatedFrom: formatCommerceDate(updatedFrom as string | Date, 'newOrUpdated.updatedFrom', 'from') };
  }
  if (filter.incrementId !== undefined) {
    const problem = codeProblem(filter.incrementId);
    if (problem) throw invalidInput('incrementId', `incrementId ${problem}: an order number such as '000000123' (got ${quoted(filter.incrementId)}).`);
    out.incrementId = filter.incrementId;
  }
  return out;
}

/** Separate groups: a `from` and a `to` in one group would OR them (any order would match). */
export function buildSearch(filter: NormalizedFilter, pageSize?: number, currentPage?: number): SearchRequest {
  const groups: SentFilter[][] = [];
  if (filter.status !== undefined) {
    groups.push([Array.isArray(filter.status)
      ? { field: 'status', value: filter.status.join(','), condition_type: 'in' }
      : { field: 'status', value: filter.status, condition_type: 'eq' }]);
  }
  if (filter.createdFrom !== undefined) groups.push([{ field: 'created_at', value: filter.createdFrom, condition_type: 'from' }]);
  if (filter.createdTo !== undefined) groups.push([{ field: 'created_at', value: filter.createdTo, condition_type: 'to' }]);
  if (filter.incrementId !== undefined) groups.push([{ field: 'increment_id', value: filter.incrementId, condition_type: 'eq' }]);
  if (filter.afterEntityId !== undefined && filter.afterEntityId > 0) {
    groups.push([{ field: 'entity_id', value: String(filter.afterEntityId), condition_type: 'gt' }]);
  }
  if (filter.newOrUpdated !== undefined) {
    // One group: its filters OR.
    groups.push([
      { field: 'entity_id', value: String(filter.newOrUpdated.afterEntityId), condition_type: 'gt' },
      { field: 'updated_at', value: filter.newOrUpdated.updatedFrom, condition_type: 'gteq' },
    ]);
  }
  return { groups, pageSize: positiveInteger('pageSize', pageSize), currentPage: positiveInteger('currentPage', currentPage) };
}

export function searchQuery(request: SearchRequest): URLSearchParams {
  const query = new URLSearchParams();
  request.groups.forEach((group, g) => {
    group.forEach((filter, f) => {
      const base = `searchCriteria[filter_groups][${g}][filters][${f}]`;
      query.append(`${base}[field]`, filter.field);
      query.append(`${base}[value]`, filter.value);
      query.append(`${base}[condition_type]`, filter.condition_type);
    });
  });
  query.append('searchCriteria[sortOrders][0][field]', 'entity_id');
  query.append('searchCriteria[sortOrders][0][direction]', 'ASC');
  if (request.pageSize !== undefined) query.append('searchCriteria[pageSize]', String(request.pageSize));
  if (request.currentPage !== undefined) query.append('searchCriteria[currentPage]', String(request.currentPage));
  return query;
}

const show = (f: { field: string; value: string; condition_type?: string | undefined }) => `${f.field} ${f.condition_type ?? 'eq'} '${f.value}'`;

/**
 * Undefined when the platform echoed what was sent; otherwise what differs. A platform that dropped
 * a filter (a proxy stripping the query string, an installation that ignores an unknown condition)
 * would otherwise hand back the wrong orders without a word.
 */
export function echoMismatch(request: SearchRequest, echo: CommerceSearchCriteria): string | undefined {
  const sent = request.groups.map((g) => g.map(show).join(' OR ')).sort();
  const got = echo.filter_groups.map((g) => g.filters.map(show).join(' OR ')).sort();
  if (sent.length !== got.length || sent.some((s, i) => s !== got[i])) {
    return `sent filters [${sent.join('] AND [')}] but the platform applied [${got.join('] AND [')}]`;
  }
  // A smaller page on the first page is a cap the platform applied and said so: the page holds the first orders all
  // the same, and paging by key (entity_id gt N) takes the next ones from the last it got. Past the first page it
  // would shift every offset, so it is refused there, as a larger size is anywhere.
  const capped = echo.page_size !== undefined && request.pageSize !== undefined && echo.page_size < request.pageSize && (request.currentPage ?? 1) === 1;
  if (echo.page_size !== undefined && request.pageSize !== undefined && echo.page_size !== request.pageSize && !capped) {
    return `sent pageSize ${request.pageSize} but the platform used ${echo.page_size}`;
  }
  if (echo.current_page !== undefined && request.currentPage !== undefined && echo.current_page !== request.currentPage) {
    return `asked for page ${request.currentPage} but the platform answered page ${echo.current_page}`;
  }
  const sort = echo.sort_orders?.[0];
  if (sort && (sort.field !== 'entity_id' || sort.direction.toUpperCase() !== 'ASC')) {
    return `sorted by entity_id ASC but the platform sorted by ${sort.field} ${sort.direction}`;
  }
  return undefined;
}

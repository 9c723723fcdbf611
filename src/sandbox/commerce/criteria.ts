import { MagentoError, MESSAGES } from './magento.js';

/** A search as Magento reads it from `searchCriteria[...]` query parameters (last value wins, as in PHP). */
export interface Filter {
  field: string;
  value: string;
  /** As sent (echoed so); undefined, or one Magento's SQL layer does not know, filters as `eq` (see condition()). */
  conditionType: string | undefined;
}
export interface Criteria {
  groups: Filter[][];
  sort: Array<{ field: string; direction: 'ASC' | 'DESC' }>;
  pageSize: number | undefined;
  currentPage: number | undefined;
}

export const CONDITIONS = new Set(['eq', 'neq', 'gt', 'gteq', 'lt', 'lteq', 'from', 'to', 'in', 'nin', 'like', 'nlike', 'null', 'notnull', 'finset', 'nfinset', 'regexp', 'seq', 'sneq']);

type Nested = { [key: string]: Nested | string };

/**
 * `a[b][0][c]=x` pairs as nested objects. The objects have no prototype, so a key such as
 * `searchCriteria[__proto__][pageSize]` is only a name and cannot reach Object.prototype.
 */
function nest(params: URLSearchParams): Nested {
  const root: Nested = Object.create(null);
  for (const [key, value] of params) {
    const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
    if (!match) continue;
    const path = [match[1]!, ...[...match[2]!.matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1]!)];
    let node = root;
    path.forEach((part, i) => {
      if (i === path.length - 1) node[part] = value;
      else node = (typeof node[part] === 'object' ? node[part] : (node[part] = Object.create(null))) as Nested;
    });
  }
  return root;
}

const list = (value: Nested | string | undefined): Array<Nested | string> =>
  typeof value === 'object' ? Object.keys(value).sort((a, b) => Number(a) - Number(b)).map((k) => value[k]!) : [];
const text = (value: Nested | string | undefined): string | undefined => (typeof value === 'string' ? value : undefined);

function integer(name: string, value: Nested | string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^\d+$/.test(value)) {
    throw new MagentoError(400, MESSAGES.invalidType, { value: typeof value === 'string' ? value : name, type: 'int' });
  }
  return Number(value);
}

/**
 * The search of `GET /V1/orders`. `searchCriteria` is a required parameter: a request without it is
 * refused (400), while a bare `?searchCriteria` is an empty search, every order.
 */
export function parseCriteria(params: URLSearchParams): Criteria {
  const sc = nest(params).searchCriteria;
  if (sc === undefined) throw new MagentoError(400, MESSAGES.required, { fieldName: 'searchCriteria' });
  const c = typeof sc === 'object' ? sc : {};
  const groups = list(c.filter_groups ?? c.filterGroups).map((group) =>
    list(typeof group === 'object' ? group.filters : undefined).map((f) => {
      const filter = typeof f === 'object' ? f : {};
      const conditionType = text(filter.condition_type ?? filter.conditionType);
      const field = text(filter.field);
      if (!field) throw new MagentoError(400, MESSAGES.required, { fieldName: 'field' });
      return { field, value: text(filter.value) ?? '', conditionType };
    }),
  ).filter((g) => g.length > 0);
  const sort = list(c.sortOrders ?? c.sort_orders).map((s) => {
    const o = typeof s === 'object' ? s : {};
    return { field: text(o.field) ?? 'entity_id', direction: (text(o.direction) ?? 'ASC').toUpperCase() === 'DESC' ? 'DESC' as const : 'ASC' as const };
  });
  return { groups, sort, pageSize: integer('pageSize', c.pageSize ?? c.page_size), currentPage: integer('currentPage', c.currentPage ?? c.current_page) };
}

/**
 * What Magento echoes in `search_criteria`: only what was sent, except that a filter sent without a
 * condition type carries `eq` (Filter::getConditionType() answers `?: 'eq'`).
 */
export function echo(criteria: Criteria): Record<string, unknown> {
  return {
    filter_groups: criteria.groups.map((g) => ({
      filters: g.map((f) => ({ field: f.field, value: f.value, condition_type: f.conditionType || 'eq' })),
    })),
    ...(criteria.sort.length ? { sort_orders: criteria.sort } : {}),
    ...(criteria.pageSize !== undefined ? { page_size: criteria.pageSize } : {}),
    ...(criteria.currentPage !== undefined ? { current_page: criteria.currentPage } : {}),
  };
}

const numeric = (s: string) => s.trim() !== '' && Number.isFinite(Number(s));

/**
 * `a` against `b`: numbers as numbers, anything else as text, case-insensitively, as Magento's
 * utf8_general_ci columns compare (`status = 'Pending'` finds the pending orders); timestamps
 * `YYYY-MM-DD HH:MM:SS` thereby compare in time order.
 */
function comparer(b: string): (a: unknown) => number {
  const number = numeric(b) ? Number(b) : undefined;
  const text = b.toLowerCase();
  return (a) => {
    if (typeof a === 'number' && number !== undefined) return a - number;
    const left = String(a).toLowerCase();
    return left < text ? -1 : left > text ? 1 : 0;
  };
}

/** A value as MySQL orders text under that collation: case-insensitively (numbers stay numbers). */
export function sortKey(value: unknown): unknown {
  return typeof value === 'string' ? value.toLowerCase() : value;
}

function likePattern(pattern: string): RegExp {
  const body = pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/%/g, '.*').replace(/_/g, '.');
  return new RegExp(`^${body}$`, 'is');
}

/** MySQL's REGEXP (case-insensitive on text); a pattern it cannot compile fails the query, which Magento answers 500. */
function regexpPattern(pattern: string): RegExp {
  try {
    return new RegExp(pattern, 'iu');
  } catch {
    throw new MagentoError(500, `Internal Error. Details are available in Magento log file. Report ID: webapi-${Date.now().toString(16)}`);
  }
}

/**
 * The condition a filter is applied with: Magento's SQL layer (Mysql::prepareSqlCondition) reads a
 * condition it does not know as `eq`, with no error, and the "strict" `seq` / `sneq` as IS NULL / IS NOT
 * NULL for an empty value, as `eq` / `neq` otherwise.
 */
export function condition(filter: Filter): string {
  const type = filter.conditionType !== undefined && CONDITIONS.has(filter.conditionType) ? filter.conditionType : 'eq';
  if (type === 'seq') return filter.value === '' ? 'null' : 'eq';
  if (type === 'sneq') return filter.value === '' ? 'notnull' : 'neq';
  return type;
}

/** A predicate over a field's value (undefined / null never match, as SQL NULL). */
export function matcher(filter: Filter): (value: unknown) => boolean {
  const { value } = filter;
  const present = (v: unknown) => v !== undefined && v !== null;
  const type = condition(filter);
  const compare = comparer(value);
  switch (type) {
    // The value is ignored, as Magento's IS NULL / IS NOT NULL ignore it.
    case 'null': return (v) => !present(v);
    case 'notnull': return present;
    case 'eq': return (v) => present(v) && compare(v) === 0;
    case 'neq': return (v) => present(v) && compare(v) !== 0;
    case 'gt': return (v) => present(v) && compare(v) > 0;
    case 'gteq': case 'from': return (v) => present(v) && compare(v) >= 0;
    case 'lt': return (v) => present(v) && compare(v) < 0;
    case 'lteq': case 'to': return (v) => present(v) && compare(v) <= 0;
    case 'in': case 'nin': {
      const options = value.split(',').map(comparer); // PHP's explode(','): ' b' stays ' b'
      const inList = (v: unknown) => options.some((option) => option(v) === 0);
      return type === 'in' ? (v) => present(v) && inList(v) : (v) => present(v) && !inList(v);
    }
    case 'like': case 'nlike': {
      const re = likePattern(value);
      return type === 'like' ? (v) => present(v) && re.test(String(v)) : (v) => present(v) && !re.test(String(v));
    }
    case 'finset': case 'nfinset': {
      // FIND_IN_SET(value, field): the value is one of the field's comma-separated items (never, holding a comma itself).
      const item = value.toLowerCase();
      const inSet = (v: unknown) => !item.includes(',') && String(v).toLowerCase().split(',').includes(item);
      return type === 'finset' ? (v) => present(v) && inSet(v) : (v) => present(v) && !inSet(v);
    }
    case 'regexp': {
      const re = regexpPattern(value);
      return (v) => present(v) && re.test(String(v));
    }
    default: throw new Error(`unhandled condition ${type}`);
  }
}

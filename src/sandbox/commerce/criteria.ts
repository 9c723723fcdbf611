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

export const CONDITIONS = new Set(['eq', 'neq', 'gt', 'gteq', 'lt', 'lteq', 'from', 'to', 'in', 'nin', 'like', 'nlike', 'null', 'notnull']);

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

/** `a` against `b`: numbers as numbers, anything else as strings (timestamps sort as strings). */
function compare(a: unknown, b: string): number {
  if (typeof a === 'number' && numeric(b)) return a - Number(b);
  const left = String(a);
  return left < b ? -1 : left > b ? 1 : 0;
}

function likePattern(pattern: string): RegExp {
  const body = pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/%/g, '.*').replace(/_/g, '.');
  return new RegExp(`^${body}$`, 'is');
}

/**
 * The condition a filter is applied with: Magento's SQL layer (Mysql::prepareSqlCondition) reads a
 * condition it does not know as `eq`, with no error.
 */
export function condition(filter: Filter): string {
  return filter.conditionType !== undefined && CONDITIONS.has(filter.conditionType) ? filter.conditionType : 'eq';
}

/** A predicate over a field's value (undefined / null never match, as SQL NULL). */
export function matcher(filter: Filter): (value: unknown) => boolean {
  const { value } = filter;
  const present = (v: unknown) => v !== undefined && v !== null;
  const type = condition(filter);
  switch (type) {
    // The value is ignored, as Magento's IS NULL / IS NOT NULL ignore it.
    case 'null': return (v) => !present(v);
    case 'notnull': return present;
    case 'eq': return (v) => present(v) && compare(v, value) === 0;
    case 'neq': return (v) => present(v) && compare(v, value) !== 0;
    case 'gt': return (v) => present(v) && compare(v, value) > 0;
    case 'gteq': case 'from': return (v) => present(v) && compare(v, value) >= 0;
    case 'lt': return (v) => present(v) && compare(v, value) < 0;
    case 'lteq': case 'to': return (v) => present(v) && compare(v, value) <= 0;
    case 'in': case 'nin': {
      const options = value.split(','); // PHP's explode(','): ' b' stays ' b'
      const inList = (v: unknown) => options.some((o) => compare(v, o) === 0);
      return type === 'in' ? (v) => present(v) && inList(v) : (v) => present(v) && !inList(v);
    }
    case 'like': case 'nlike': {
      const re = likePattern(value);
      return type === 'like' ? (v) => present(v) && re.test(String(v)) : (v) => present(v) && !re.test(String(v));
    }
    default: throw new Error(`unhandled condition ${type}`);
  }
}

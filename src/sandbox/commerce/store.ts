import { condition as conditionOf, matcher, sortKey, type Criteria, type Filter } from './criteria.js';
import { CURRENCIES, generateOrder, prng, STATES, type OrderFacts } from './generate.js';
import type { SandboxOrder as Order } from './types.js';
import { MagentoError, MESSAGES } from './magento.js';

export interface OrderStoreOptions {
  seed: number;
  count: number;
  /** Unix seconds of the first order. */
  start: number;
  /** Orders are spread over this many seconds. */
  spread: number;
}

/** `YYYY-MM-DD HH:MM:SS` (UTC) ↔ unix seconds. */
export const formatSeconds = (s: number) => new Date(s * 1000).toISOString().slice(0, 19).replace('T', ' ');
export function parseSeconds(value: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(value)) return undefined;
  const ms = Date.parse(`${value.replace(' ', 'T')}Z`);
  return Number.isNaN(ms) ? undefined : ms / 1000;
}

const NUMERIC_CONDITIONS = new Set(['eq', 'neq', 'gt', 'gteq', 'lt', 'lteq', 'from', 'to']);
const sign = (n: number, condition: string) => {
  switch (condition) {
    case 'eq': return n === 0;
    case 'neq': return n !== 0;
    case 'gt': return n > 0;
    case 'gteq': case 'from': return n >= 0;
    case 'lt': return n < 0;
    default: return n <= 0;
  }
};

/**
 * The sandbox's orders: generated ones are a few bytes each in typed arrays (created_at, state,
 * currency) and built on demand; added or modified ones are kept whole. Searches scan the arrays,
 * and the last few results are cached until an order changes.
 */
export class OrderStore {
  private readonly created: Uint32Array;
  private readonly state: Uint8Array;
  private readonly currency: Uint8Array;
  private readonly changed = new Map<number, Order>();
  /** Inserted, not yet committed: their ids are taken, but no read or search sees them. */
  private readonly uncommitted = new Set<number>();
  private readonly cache: Array<{ key: string; version: number; ids: number[] }> = [];
  private last: Order | undefined;
  private version = 0;
  private nextId: number;

  constructor(private readonly options: OrderStoreOptions) {
    const { seed, count, start, spread } = options;
    this.created = new Uint32Array(count);
    this.state = new Uint8Array(count);
    this.currency = new Uint8Array(count);
    const gap = count > 0 ? spread / count : 0;
    let at = start;
    for (let i = 0; i < count; i++) {
      const r = prng(seed, i + 1);
      at += Math.floor(r() * 2 * gap);
      this.created[i] = at;
      const s = r();
      this.state[i] = s < 0.3 ? 0 : s < 0.65 ? 1 : 2;
      const c = r();
      this.currency[i] = c < 0.4 ? 0 : c < 0.7 ? 1 : c < 0.85 ? 2 : 3;
    }
    this.nextId = count + 1;
  }

  get size(): number {
    return this.nextId - 1;
  }

  private isBase(id: number): boolean {
    return id >= 1 && id <= this.options.count && !this.changed.has(id);
  }

  private facts(id: number, created?: string, stateIndex?: number, currencyIndex?: number): OrderFacts {
    const i = id - 1;
    return { id, created: created ?? formatSeconds(this.created[i]!), stateIndex: stateIndex ?? this.state[i]!, currencyIndex: currencyIndex ?? this.currency[i]! };
  }

  get(id: number): Order | undefined {
    if (!Number.isSafeInteger(id) || this.uncommitted.has(id)) return undefined;
    const changed = this.changed.get(id);
    if (changed) return changed;
    if (!this.isBase(id)) return undefined;
    if (this.last?.entity_id !== id) this.last = generateOrder(this.options.seed, this.facts(id));
    return this.last;
  }

  add(partial: Record<string, unknown>, nowSeconds: number, committed = true): Order {
    const id = this.nextId++;
    if (!committed) this.uncommitted.add(id);
    const stateIndex = Math.max(0, STATES.findIndex((s) => s.state === partial.state));
    const currencyIndex = Math.max(0, CURRENCIES.findIndex((c) => c.code === partial.order_currency_code));
    const base = generateOrder(this.options.seed, this.facts(id, formatSeconds(nowSeconds), stateIndex, currencyIndex));
    return this.put({ ...base, ...partial, entity_id: id });
  }

  commit(id: number): void {
    if (!this.uncommitted.delete(id)) throw new TypeError(`no uncommitted sandbox order with entity_id ${id}`);
    this.changedOrders();
  }

  /** A change, saved as Magento saves one: `updated_at` becomes now unless the patch sets it. */
  set(id: number, patch: Record<string, unknown>, nowSeconds: number): Order {
    const current = this.get(id);
    if (!current) throw new TypeError(`no sandbox order with entity_id ${id}`);
    return this.put({ ...current, updated_at: formatSeconds(nowSeconds), ...patch, entity_id: id });
  }

  private put(order: Order): Order {
    this.changed.set(order.entity_id, order);
    this.changedOrders();
    return order;
  }

  /** Cached search results are stale once any order is added, changed or committed. */
  private changedOrders(): void {
    this.version += 1;
    this.cache.length = 0;
  }

  /** A field of a base (unchanged, generated) order, from the arrays when it can. */
  private baseValue(id: number, field: string): unknown {
    switch (field) {
      case 'entity_id': return id;
      case 'created_at': case 'updated_at': return formatSeconds(this.created[id - 1]!); // a generated order was never changed
      case 'state': return STATES[this.state[id - 1]!]!.state;
      case 'status': return STATES[this.state[id - 1]!]!.status;
      case 'order_currency_code': return CURRENCIES[this.currency[id - 1]!]!.code;
      case 'increment_id': return String(id).padStart(9, '0');
      default: return this.get(id)![field];
    }
  }

  private baseTest(filter: Filter): (id: number) => boolean {
    const condition = conditionOf(filter);
    const seconds = parseSeconds(filter.value);
    if (filter.field === 'created_at' && seconds !== undefined && NUMERIC_CONDITIONS.has(condition)) {
      return (id) => sign(this.created[id - 1]! - seconds, condition);
    }
    const test = matcher(filter);
    return (id) => test(this.baseValue(id, filter.field));
  }

  /** entity_ids matching every group (a group: any of its filters), in the requested order. */
  search(criteria: Criteria): Matches {
    // entity_id bounds (a group of one numeric entity_id filter) narrow a cached match list, so a client
    // paging by key (`entity_id gt N`) costs a binary search, not a scan, as an indexed database would.
    let lo = 1;
    let hi = Infinity;
    const others = criteria.groups.filter((group) => {
      const f = group[0]!;
      const v = Number(f.value);
      if (group.length !== 1 || f.field !== 'entity_id' || !Number.isFinite(v)) return true;
      const c = conditionOf(f);
      if (c === 'gt') lo = Math.max(lo, Math.floor(v) + 1);
      else if (c === 'gteq' || c === 'from') lo = Math.max(lo, Math.ceil(v));
      else if (c === 'lt') hi = Math.min(hi, Math.ceil(v) - 1);
      else if (c === 'lteq' || c === 'to') hi = Math.min(hi, Math.floor(v));
      else if (c === 'eq') [lo, hi] = [Math.max(lo, Math.ceil(v)), Math.min(hi, Math.floor(v))]; // 5.5 matches no id
      else return true;
      return false;
    });
    const all = this.matching(others, criteria.sort);
    if (lo <= 1 && hi === Infinity) return all;
    if (criteria.sort.some((s) => s.field !== 'entity_id' || s.direction === 'DESC')) return all.filter((id) => id >= lo && id <= hi);
    // A window onto the cached list: a page is sliced from it, never the whole tail copied.
    const start = firstAtLeast(all, lo);
    const length = Math.max(0, firstAtLeast(all, hi + 1) - start); // contradictory bounds match nothing
    return { length, slice: (from, to) => all.slice(start + from, start + Math.min(to, length)) };
  }

  /** entity_ids matching every group (a group: any of its filters), in the requested order; the last few lists are cached. */
  private matching(criteriaGroups: Criteria['groups'], criteriaSort: Criteria['sort']): number[] {
    const key = JSON.stringify([criteriaGroups, criteriaSort]);
    const hit = this.cache.find((c) => c.key === key && c.version === this.version);
    if (hit) return hit.ids;
    const groups = criteriaGroups.map((group) => group.map((f) => ({ base: this.baseTest(f), full: matcher(f), field: f.field })));
    const ids: number[] = [];
    for (let id = 1; id <= this.size; id++) {
      const changed = this.changed.size ? this.changed.get(id) : undefined;
      if (changed) {
        if (this.uncommitted.has(id)) continue;
        if (groups.every((g) => g.some((f) => f.full(changed[f.field])))) ids.push(id);
      } else if (id <= this.options.count && groups.every((g) => g.some((f) => f.base(id)))) {
        ids.push(id);
      }
    }
    const sort = criteriaSort.filter((s) => s.field !== 'entity_id' || s.direction === 'DESC');
    if (sort.length) {
      const value = (id: number, field: string) => {
        const changed = this.changed.get(id);
        return changed ? changed[field] : this.baseValue(id, field);
      };
      // Each order's keys read once: a field outside the typed arrays means generating the order, and a
      // comparator that did so per comparison kept the sandbox busy for seconds.
      const keyed = ids.map((id) => ({ id, keys: criteriaSort.map((s) => sortKey(value(id, s.field))) }));
      keyed.sort((a, b) => {
        for (let i = 0; i < criteriaSort.length; i++) {
          const order = sortOrder(a.keys[i], b.keys[i]);
          if (order !== 0) return criteriaSort[i]!.direction === 'DESC' ? -order : order;
        }
        return a.id - b.id;
      });
      for (let i = 0; i < keyed.length; i++) ids[i] = keyed[i]!.id;
    }
    this.cache.unshift({ key, version: this.version, ids });
    this.cache.length = Math.min(this.cache.length, 4);
    return ids;
  }

  /** A missing order, as Magento says it. */
  static notFound(): MagentoError {
    return new MagentoError(404, MESSAGES.noSuchEntity);
  }
}

/** Search results: an array, or a window onto one. */
export interface Matches {
  readonly length: number;
  slice(from: number, to: number): number[];
}

/** Index of the first id at or above `value` in an ascending list. */
function firstAtLeast(ids: readonly number[], value: number): number {
  let low = 0;
  let high = ids.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (ids[mid]! < value) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** MySQL's order of two values: NULL (absent) first, numbers as numbers, text as text (compared as sortKey made it). */
function sortOrder(x: unknown, y: unknown): number {
  const xNull = x === undefined || x === null;
  const yNull = y === undefined || y === null;
  if (xNull || yNull) return xNull === yNull ? 0 : xNull ? -1 : 1;
  if (typeof x === 'number' && typeof y === 'number') return x - y;
  const left = String(x);
  const right = String(y);
  return left < right ? -1 : left > right ? 1 : 0;
}

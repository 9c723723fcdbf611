import type { Awaitable } from '../awaitable.js';

/**
 * The payment ledger: what the library has learned about each payment, from status polls and
 * webhooks, keyed by payment id.
 *
 * A status never moves backwards. `record()` applies this rule itself, atomically, from the
 * outcome's rank alone (the store needs no list of status names):
 *
 * | outcome      | rank |
 * |--------------|------|
 * | `unresolved` | 0    |
 * | `failed`     | 1    |
 * | `confirmed`  | 2    |
 *
 * - no entry yet: the observation becomes the entry (`firstSeenAt` = `updatedAt` = `at`);
 * - higher rank: status, outcome and source take the observation's, `updatedAt` its `at` unless the
 *   entry's is later (records from several instances can land out of order);
 * - same rank 0 (still unresolved): the status takes the newer value (e.g. processing → requires_action),
 *   if it was seen no earlier than the entry's `updatedAt`; any status takes the place of none (`null`, a poll
 *   that learned nothing) whenever it was seen, and none never takes the place of a status;
 * - same terminal rank, or lower rank: the status stays (a late `pending` does not undo `succeeded`,
 *   and the first terminal status of a rank is kept);
 * - `orderId`, `amount`, `currency` fill in when the entry has none yet, whatever the rank.
 *
 * Confirmed outranks failed on purpose: money that the service says was taken must never be
 * hidden behind an earlier failure.
 *
 * On Redis: one hash per payment (`ledger:pay:<id>`) with the fields below, and `record` as one Lua
 * script that reads the hash, compares `rank` to ARGV, writes the fields that change, moves the id
 * between the per-outcome sorted sets (`ledger:outcome:<outcome>` scored by firstSeenAt,
 * `ledger:updated:<outcome>` scored by updatedAt) and adds it to `ledger:order:<orderId>`, then
 * returns the resulting hash. `list` is ZRANGEBYSCORE over one sorted set, page by page; `byOrder`
 * is SMEMBERS + HGETALL; `forget` is a script that checks its condition on the hash, then deletes it
 * and takes the id out of every set.
 *
 * Any method may throw (or reject) when the store is unreachable.
 */
export type LedgerOutcome = 'confirmed' | 'failed' | 'unresolved';

/** Each outcome's rank: `record` never moves an entry to a lower one. */
export const OUTCOME_RANK: Readonly<Record<LedgerOutcome, number>> = Object.freeze({ unresolved: 0, failed: 1, confirmed: 2 });

/** How the library learned a status. */
export type LedgerSource = 'poll' | 'webhook';

/** One observation of a payment, as handed to `record`. */
export interface LedgerObservation {
  /** The service's payment id. */
  paymentId: string;
  /** The service's status; null when nothing is known yet (every poll failed), so a sweep still finds the payment. */
  status: string | null;
  /** What the status means for the money: confirmed (taken), failed, or unresolved (may still change). */
  outcome: LedgerOutcome;
  /** A status poll or a webhook. */
  source: LedgerSource;
  /** When it was learned, in milliseconds. */
  at: number;
  /** The merchant's order id the payment was minted for (the service's `order_id`), when the observation carries it. */
  orderId?: string | undefined;
  /** The amount in minor units, when the observation carries it. */
  amount?: number | undefined;
  /** The ISO 4217 currency code, when the observation carries it. */
  currency?: string | undefined;
}

/** What the ledger knows about one payment: the highest-ranked status seen, and the order it is for. */
export interface LedgerEntry {
  /** The service's payment id. */
  paymentId: string;
  /** The service's status (`succeeded`, `failed`, `processing`, …); null while none was ever learned. */
  status: string | null;
  /** What the status means for the money: confirmed (taken), failed, or unresolved (may still change). */
  outcome: LedgerOutcome;
  /** How the current status was learned; 'poll' too while `status` is null (a poll recorded the payment, learning nothing). */
  source: LedgerSource;
  /** The merchant's order id, once any observation carried it. */
  orderId?: string | undefined;
  /** The amount in minor units, once any observation carried it. */
  amount?: number | undefined;
  /** The ISO 4217 currency code, once any observation carried it. */
  currency?: string | undefined;
  /** When the ledger first heard of the payment (ms). */
  firstSeenAt: number;
  /** When the entry last changed (ms). */
  updatedAt: number;
}

/** What `record` answers. */
export interface LedgerRecordResult {
  /** The entry after this observation: the stored one, which may rank above the observation. */
  entry: LedgerEntry;
  /** The entry before it, if there was one. */
  previous: LedgerEntry | undefined;
  /** True when the status or outcome changed (or the entry is new). */
  changed: boolean;
}

/** Which entries `list` yields: one outcome, optionally within time bounds (each inclusive). */
export interface LedgerQuery {
  /** Only entries with this outcome. */
  outcome: LedgerOutcome;
  /** Only entries first seen at or after this instant (ms). */
  firstSeenFrom?: number;
  /** Only entries first seen at or before this instant (ms). */
  firstSeenTo?: number;
  /**
   * Only entries last changed at or after this instant (ms): for a confirmed payment,
   * when it was confirmed (or, later, when an order id or amount filled in). With either bound the
   * entries come oldest change first.
   */
  updatedFrom?: number;
  /** Only entries last changed at or before this instant (ms); see `updatedFrom`. */
  updatedTo?: number;
}

/** Whether a query bounds `updatedAt`: its entries then come oldest change first. */
export function listsByUpdate(query: LedgerQuery): boolean {
  return query.updatedFrom !== undefined || query.updatedTo !== undefined;
}

/** Whether an entry is one a query asks for (its outcome, within every bound): the stores share it. */
export function matchesQuery(entry: LedgerEntry, query: LedgerQuery): boolean {
  const { firstSeenFrom = -Infinity, firstSeenTo = Infinity, updatedFrom = -Infinity, updatedTo = Infinity } = query;
  return entry.outcome === query.outcome && entry.firstSeenAt >= firstSeenFrom && entry.firstSeenAt <= firstSeenTo && entry.updatedAt >= updatedFrom && entry.updatedAt <= updatedTo;
}

/**
 * Which entry `forget` may remove; it checks the condition on the entry as it is at that moment, so a
 * status learned meanwhile (a webhook) keeps the entry.
 * - `unknown`: no status was ever learned for it (a payment id the service turned out not to know);
 * - `settled`: confirmed or failed, and last changed at or before `updatedTo` (ms): retention.
 */
export type ForgetCondition = { kind: 'unknown' } | { kind: 'settled'; updatedTo: number };

/** Whether `forget` may remove this entry under this condition: the stores share it. */
export function isForgettable(entry: LedgerEntry, condition: ForgetCondition): boolean {
  if (condition.kind === 'unknown') return entry.status === null;
  return entry.outcome !== 'unresolved' && entry.updatedAt <= condition.updatedTo;
}

/**
 * Where the ledger lives: `MemoryLedgerStore` (one process) or `RedisLedgerStore` (shared), or your own
 * for another database, following the rules above (`applyObservation` is the record rule as a function).
 */
export interface LedgerStore {
  /** The entry of this payment, or undefined when the ledger never heard of it. */
  get(paymentId: string): Promise<LedgerEntry | undefined>;
  /**
   * Applies one observation atomically by the rules above and answers the resulting entry. It may answer
   * at once instead of with a promise (the memory store does): every webhook records, and need not wait.
   */
  record(observation: LedgerObservation): Awaitable<LedgerRecordResult>;
  /** The entries with this outcome, oldest first seen first (oldest change first when the query bounds `updatedAt`). A store may page underneath. */
  list(query: LedgerQuery): AsyncIterable<LedgerEntry>;
  /** Every entry recorded against this order id. */
  byOrder(orderId: string): Promise<LedgerEntry[]>;
  /** Removes the entry if it meets the condition, atomically; true when it was removed. */
  forget(paymentId: string, condition: ForgetCondition): Promise<boolean>;
}

/** The record rule, shared by the memory store and the tests of any other store. */
export function applyObservation(current: LedgerEntry | undefined, observation: LedgerObservation): LedgerRecordResult {
  const { paymentId, status, outcome, source, at, orderId, amount, currency } = observation;
  if (!current) {
    const entry: LedgerEntry = { paymentId, status, outcome, source, firstSeenAt: at, updatedAt: at };
    if (orderId !== undefined) entry.orderId = orderId;
    if (amount !== undefined) entry.amount = amount;
    if (currency !== undefined) entry.currency = currency;
    return { entry, previous: undefined, changed: true };
  }
  const incoming = OUTCOME_RANK[outcome];
  const stored = OUTCOME_RANK[current.outcome];
  // Another status of the same rank is newer only if it was seen later: two instances (or their clocks) can land records out of order.
  // But any status outranks none (a poll that learned nothing), whenever seen: a clock ahead must not keep "nothing known"
  // over a pending payment, since minting from the order refuses only a payment with a status.
  const lateral = incoming === 0 && stored === 0 && status !== null && status !== current.status && (current.status === null || at >= current.updatedAt);
  const changed = incoming > stored || lateral;
  const fills = (current.orderId === undefined && orderId !== undefined)
    || (current.amount === undefined && amount !== undefined)
    || (current.currency === undefined && currency !== undefined);
  // The common case on a webhook retry or a late event: nothing to change, nothing to copy.
  if (!changed && !fills) return { entry: current, previous: current, changed };
  const entry: LedgerEntry = { ...current };
  if (changed) Object.assign(entry, { status, outcome, source, updatedAt: Math.max(current.updatedAt, at) });
  if (entry.orderId === undefined && orderId !== undefined) entry.orderId = orderId;
  if (entry.amount === undefined && amount !== undefined) entry.amount = amount;
  if (entry.currency === undefined && currency !== undefined) entry.currency = currency;
  if (fills && !changed) entry.updatedAt = Math.max(entry.updatedAt, at);
  return { entry, previous: current, changed };
}

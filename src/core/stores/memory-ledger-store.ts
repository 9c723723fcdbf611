import type { Awaitable } from '../awaitable.js';
import { maxEntriesOption } from './max-entries.js';
import { applyObservation, isForgettable, listsByUpdate, matchesQuery, type ForgetCondition, type LedgerEntry, type LedgerObservation, type LedgerQuery, type LedgerRecordResult, type LedgerStore } from './ledger-store.js';

/** Options of `new MemoryLedgerStore()`. */
export interface MemoryLedgerStoreOptions {
  /**
   * Most payments kept (default 100,000). Past it the oldest entry nothing is known of goes first (a
   * payment id a page asked about while the service could not answer: anyone can send those), then the
   * oldest failed one, then the oldest confirmed one (which keeps its order from being charged again),
   * and unresolved entries with a status only when nothing else is left, since they are the sweep's
   * work. The entry just recorded is never the one dropped.
   */
  maxEntries?: number | undefined;
}

/** Where an entry stands in line for eviction: 'unknown' when no status was ever learned for it. */
type Bucket = LedgerEntry['outcome'] | 'unknown';
const EVICTION_ORDER: readonly Bucket[] = ['unknown', 'failed', 'confirmed', 'unresolved'];
const bucket = (entry: LedgerEntry): Bucket => (entry.status === null ? 'unknown' : entry.outcome);

/**
 * The ledger in this process's memory: right for one instance, and lost on restart. Several
 * instances, or a sweep run from another process (the CLI), need a shared store (Redis).
 */
export class MemoryLedgerStore implements LedgerStore {
  readonly #entries = new Map<string, LedgerEntry>();
  readonly #orders = new Map<string, Set<string>>();
  /** Payment ids by eviction bucket, in the order they entered it: who goes first when the store is full. */
  readonly #byBucket: Record<Bucket, Set<string>> = { unknown: new Set(), failed: new Set(), confirmed: new Set(), unresolved: new Set() };
  readonly #maxEntries: number;

  constructor(options: MemoryLedgerStoreOptions = {}) {
    this.#maxEntries = maxEntriesOption('MemoryLedgerStore', options.maxEntries, 100_000, 'payments');
  }

  async get(paymentId: string): Promise<LedgerEntry | undefined> {
    const entry = this.#entries.get(paymentId);
    return entry && { ...entry };
  }

  record(observation: LedgerObservation): Awaitable<LedgerRecordResult> {
    // Synchronous from read to write: nothing can interleave, which is what makes it atomic here.
    const result = applyObservation(this.#entries.get(observation.paymentId), observation);
    const { entry, previous } = result;
    // The stored entry itself when nothing changed (a retried or late webhook): nothing to write or index.
    if (entry !== previous) this.#store(entry, previous);
    return { entry: { ...entry }, previous: previous && { ...previous }, changed: result.changed };
  }

  /** Files a new or changed entry: by id, in its eviction bucket, under its order. */
  #store(entry: LedgerEntry, previous: LedgerEntry | undefined): void {
    this.#entries.set(entry.paymentId, entry);
    const was = previous && bucket(previous);
    if (was !== bucket(entry)) {
      if (was) this.#byBucket[was].delete(entry.paymentId);
      this.#byBucket[bucket(entry)].add(entry.paymentId);
    }
    if (entry.orderId !== undefined) {
      let ids = this.#orders.get(entry.orderId);
      if (!ids) this.#orders.set(entry.orderId, (ids = new Set()));
      ids.add(entry.paymentId);
    }
    if (!previous && this.#entries.size > this.#maxEntries) this.#evict(entry.paymentId);
  }

  async *list(query: LedgerQuery): AsyncIterable<LedgerEntry> {
    // The order from a snapshot (the caller may record while it iterates: the sweep does), each entry as it
    // is now: one that left the outcome meanwhile (a webhook confirmed it) is skipped, as Redis's pages do.
    const matching = [...this.#entries.values()]
      .filter((e) => matchesQuery(e, query))
      .sort(listsByUpdate(query) ? (a, b) => a.updatedAt - b.updatedAt : (a, b) => a.firstSeenAt - b.firstSeenAt);
    for (const { paymentId } of matching) {
      const entry = this.#entries.get(paymentId);
      if (entry?.outcome === query.outcome) yield { ...entry };
    }
  }

  async byOrder(orderId: string): Promise<LedgerEntry[]> {
    const ids = this.#orders.get(orderId);
    if (!ids) return [];
    return [...ids].flatMap((id) => {
      const entry = this.#entries.get(id);
      return entry ? [{ ...entry }] : [];
    });
  }

  async forget(paymentId: string, condition: ForgetCondition): Promise<boolean> {
    const entry = this.#entries.get(paymentId);
    if (!entry || !isForgettable(entry, condition)) return false;
    this.#remove(entry);
    return true;
  }

  /** Entries held (for tests and diagnostics). */
  get size(): number {
    return this.#entries.size;
  }

  /** Drops one entry other than `kept` (the one just recorded, which a full ledger of unresolved ones would otherwise lose at once). */
  #evict(kept: string): void {
    let victim: LedgerEntry | undefined;
    for (const name of EVICTION_ORDER) {
      for (const id of this.#byBucket[name]) {
        if (id === kept) continue;
        victim = this.#entries.get(id);
        break;
      }
      if (victim) break;
    }
    if (victim) this.#remove(victim);
  }

  #remove(entry: LedgerEntry): void {
    this.#entries.delete(entry.paymentId);
    this.#byBucket[bucket(entry)].delete(entry.paymentId);
    if (entry.orderId !== undefined) {
      const ids = this.#orders.get(entry.orderId);
      ids?.delete(entry.paymentId);
      if (ids?.size === 0) this.#orders.delete(entry.orderId);
    }
  }
}

import type { Awaitable } from '../awaitable.js';
import type { Logger } from '../types.js';
import { DONE, type ClaimResult, type ClaimStore } from './claim-store.js';
import { maxEntriesOption } from './max-entries.js';

/** Options of `new MemoryClaimStore()`. */
export interface MemoryClaimStoreOptions {
  /**
   * Most keys kept; the oldest written go first beyond it. One key per webhook event whose payload carries its
   * id, two otherwise (event id and signature), so the default 100,000 covers 100,000 (or 50,000) events in
   * the retention period.
   */
  maxEntries?: number | undefined;
  /** Clock in milliseconds (the pay instance's `now`); `Date.now` by default. */
  now?: (() => number) | undefined;
  /** Told once when a key goes before its time (maxEntries too small for the retention): the pay instance's logger. */
  logger?: Pick<Logger, 'warn'> | undefined;
}

/** A key's value and the instant (ms) after which it is gone. */
interface Held {
  value: string;
  expiresAt: number;
}

/**
 * Claims in this process's memory: right for one instance. Several instances behind a load balancer need
 * a shared store (Redis) or each may process the same event once. Each method answers at once, typed
 * Awaitable so that a subclass (a test's failing store) may answer with a promise.
 *
 * A Map in insertion order, each value stamped with its expiry, rather than lru-cache: every webhook reads
 * and writes here three times each, and lru-cache's recency bookkeeping doubled what that costs (measured
 * at 100,000 keys: 1.3 against 2.4 µs an event). A claim is written during its delivery and seldom read
 * after, so letting the oldest written key go first is as good as letting the least recently used go; a
 * renewal writes a running handler's claim anew, so it is not the oldest while it is renewed.
 */
export class MemoryClaimStore implements ClaimStore {
  readonly #entries = new Map<string, Held>();
  /**
   * Walks the keys oldest first, one eviction after another: a new iterator for each would step over every
   * slot the evictions before it emptied (V8 compacts a Map only now and then). Made at an eviction, and
   * dropped once the Map changed a quarter of maxEntries times without one: an iterator that stops moving
   * keeps alive every table the Map outgrows after it, with their keys.
   */
  #oldest: Iterator<string> | undefined;
  /** Adds and deletes since the last eviction. */
  #sinceEviction = 0;
  readonly #maxEntries: number;
  readonly #now: () => number;
  /** Lease tokens only need to differ within this store, so a counter does (a random UUID costs ~2 µs). */
  #leases = 0;
  readonly #logger: Pick<Logger, 'warn'> | undefined;
  /** Whether a key went before its time yet: said once, and not looked for after (a Map lookup each eviction). */
  #evictedLive = false;

  constructor(options: MemoryClaimStoreOptions = {}) {
    const { now = Date.now, logger } = options;
    this.#logger = logger;
    this.#maxEntries = maxEntriesOption('MemoryClaimStore', options.maxEntries, 100_000, 'keys');
    this.#now = now;
  }

  claim(key: string, leaseMs: number): Awaitable<ClaimResult> {
    const held = this.#live(key);
    if (held !== undefined) return held.value === DONE ? { state: 'done' } : { state: 'in_progress' };
    const token = `lease-${++this.#leases}`;
    this.#add(key, token, leaseMs);
    return { state: 'claimed', token };
  }

  complete(key: string, token: string, retentionMs: number): Awaitable<boolean> {
    const held = this.#live(key);
    if (held === undefined) {
      this.#add(key, DONE, retentionMs);
      return true;
    }
    if (held.value === DONE) return false;
    const ours = held.value === token;
    held.value = DONE;
    held.expiresAt = this.#expiry(retentionMs);
    return ours;
  }

  renew(key: string, token: string, leaseMs: number): Awaitable<boolean> {
    const held = this.#live(key);
    if (held !== undefined && held.value !== token) return false;
    // Written anew, so last in line: a slow handler's claim must not be evicted while it is renewed.
    if (held !== undefined) this.#delete(key);
    this.#add(key, token, leaseMs);
    return true;
  }

  release(key: string, token: string): Awaitable<boolean> {
    if (this.#live(key)?.value !== token) return false;
    this.#delete(key);
    return true;
  }

  bind(key: string, value: string, ttlMs: number): Awaitable<string | undefined> {
    const held = this.#live(key);
    if (held !== undefined) return held.value;
    this.#add(key, value, ttlMs);
    return undefined;
  }

  /** Keys currently held, expired ones excepted (for tests and diagnostics). */
  get size(): number {
    for (const key of [...this.#entries.keys()]) this.#live(key);
    return this.#entries.size;
  }

  // One Map lookup for each read and each write: a delivery makes five, on a Map of up to maxEntries keys.

  /** The key's entry while it lasts; an expired key is dropped as it is found, so #add may follow. */
  #live(key: string): Held | undefined {
    const held = this.#entries.get(key);
    if (held === undefined || this.#now() <= held.expiresAt) return held;
    this.#delete(key);
    return undefined;
  }

  /** Any delete but an eviction. */
  #delete(key: string): void {
    this.#entries.delete(key);
    this.#changedWithoutEviction();
  }

  /** A key #live found absent, written last; past maxEntries the oldest written key goes (a completion keeps its claim's place). */
  #add(key: string, value: string, ttlMs: number): void {
    this.#entries.set(key, { value, expiresAt: this.#expiry(ttlMs) });
    if (this.#entries.size > this.#maxEntries) this.#evictOldest();
    else this.#changedWithoutEviction();
  }

  /** When a value set now for `ttlMs` (at least 1 ms, as Redis's PX) is gone. */
  #expiry(ttlMs: number): number {
    return this.#now() + Math.max(1, Math.ceil(ttlMs));
  }

  #evictOldest(): void {
    this.#oldest ??= this.#entries.keys();
    this.#sinceEviction = 0;
    // Every key the walk has not reached lies ahead of it (each it passed was evicted), so it is not done.
    const key = this.#oldest.next().value as string;
    if (!this.#evictedLive) this.#warnIfLive(key);
    this.#entries.delete(key);
  }

  /** A processed event forgotten before its retention ends could run again if sent again: worth saying, once. */
  #warnIfLive(key: string): void {
    const held = this.#entries.get(key);
    if (held === undefined || this.#now() > held.expiresAt) return;
    this.#evictedLive = true;
    this.#logger?.warn({ maxEntries: this.#maxEntries }, `webhook claim store full: it keeps ${this.#maxEntries} keys (one an event, two for a payload without an id), and forgot one before its retention ended, so a duplicate delivery of that event could run its handlers again. Raise maxEntries (new MemoryClaimStore({ maxEntries })), shorten webhooks.retentionMs, or keep claims in Redis (redisStores), which keeps them all.`);
  }

  #changedWithoutEviction(): void {
    if (this.#oldest !== undefined && ++this.#sinceEviction > this.#maxEntries / 4) this.#oldest = undefined;
  }
}

import type { Awaitable } from '../awaitable.js';
import { PayError } from '../errors.js';
import { describeKind } from '../option-types.js';
import { DONE, type ClaimResult, type ClaimStore } from './claim-store.js';

/** Options of `new MemoryClaimStore()`. */
export interface MemoryClaimStoreOptions {
  /**
   * Most keys kept; the oldest written go first beyond it. Two keys per webhook event (event id and
   * signature), so the default 100,000 covers about 50,000 events in the retention period.
   */
  maxEntries?: number | undefined;
  /** Clock in milliseconds (the pay instance's `now`); `Date.now` by default. */
  now?: (() => number) | undefined;
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
 * after, so letting the oldest written key go first is as good as letting the least recently used go.
 */
export class MemoryClaimStore implements ClaimStore {
  readonly #entries = new Map<string, Held>();
  /**
   * Walks the keys oldest first, one eviction after another. Kept rather than made anew: a new iterator
   * would step over every slot the evictions before it emptied, each time (V8 compacts a Map only as it grows).
   */
  #oldest: Iterator<string> = this.#entries.keys();
  readonly #maxEntries: number;
  readonly #now: () => number;
  /** Lease tokens only need to differ within this store, so a counter does (a random UUID costs ~2 µs). */
  #leases = 0;

  constructor(options: MemoryClaimStoreOptions = {}) {
    const { maxEntries = 100_000, now = Date.now } = options;
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) {
      throw new PayError('CONFIG_INVALID', `new MemoryClaimStore({ maxEntries }) takes a whole number of keys, 1 or more (the default is 100,000), got ${describeKind(maxEntries)}.`, { details: { options: ['maxEntries'] } });
    }
    this.#maxEntries = maxEntries;
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
    this.#set(held, DONE, retentionMs);
    return ours;
  }

  renew(key: string, token: string, leaseMs: number): Awaitable<boolean> {
    const held = this.#live(key);
    if (held === undefined) this.#add(key, token, leaseMs);
    else if (held.value === token) this.#set(held, token, leaseMs);
    else return false;
    return true;
  }

  release(key: string, token: string): Awaitable<boolean> {
    if (this.#live(key)?.value !== token) return false;
    this.#entries.delete(key);
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
    this.#entries.delete(key);
    return undefined;
  }

  #set(held: Held, value: string, ttlMs: number): void {
    held.value = value;
    held.expiresAt = this.#expiry(ttlMs);
  }

  /** A key #live found absent, written last; past maxEntries the oldest written key goes. */
  #add(key: string, value: string, ttlMs: number): void {
    this.#entries.set(key, { value, expiresAt: this.#expiry(ttlMs) });
    if (this.#entries.size > this.#maxEntries) this.#evictOldest();
  }

  /** When a value set now for `ttlMs` (at least 1 ms, as Redis's PX) is gone. */
  #expiry(ttlMs: number): number {
    return this.#now() + Math.max(1, Math.ceil(ttlMs));
  }

  #evictOldest(): void {
    let oldest = this.#oldest.next();
    // Every key it has not reached yet lies ahead of it, so it is never done here; if it ever were (a
    // finished iterator stays finished), another one starts from the oldest key.
    if (oldest.done) oldest = (this.#oldest = this.#entries.keys()).next();
    this.#entries.delete(oldest.value as string);
  }
}

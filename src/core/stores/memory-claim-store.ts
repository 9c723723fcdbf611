import { LRUCache } from 'lru-cache';
import { DONE, type ClaimResult, type ClaimStore } from './claim-store.js';

/** Options of `new MemoryClaimStore()`. */
export interface MemoryClaimStoreOptions {
  /**
   * Most keys kept; the least recently used go first beyond it. Two keys per webhook event (event id
   * and signature), so the default 100,000 covers about 50,000 events in the retention period.
   */
  maxEntries?: number | undefined;
  /** Clock in milliseconds (the pay instance's `now`); `Date.now` by default. */
  now?: (() => number) | undefined;
}

/**
 * Claims in this process's memory: right for one instance. Several instances behind a load
 * balancer need a shared store (Redis) or each may process the same event once.
 */
export class MemoryClaimStore implements ClaimStore {
  readonly #cache: LRUCache<string, string>;
  /** Lease tokens only need to differ within this store, so a counter does (a random UUID costs ~2 µs). */
  #leases = 0;

  constructor(options: MemoryClaimStoreOptions = {}) {
    const now = options.now ?? Date.now;
    this.#cache = new LRUCache<string, string>({
      // A size of 1 each rather than `max`: with `max`, lru-cache allocates arrays for every entry up front
      // (4 MB at the default), a cost each Pay instance of a host with many merchants paid on its first webhook.
      maxSize: options.maxEntries ?? 100_000,
      sizeCalculation: () => 1,
      // lru-cache treats a start time of 0 as "no TTL"; the offset keeps a test clock at 0 honest.
      perf: { now: () => now() + 1 },
      // Read the clock on every check instead of caching it behind a 1 ms timer.
      ttlResolution: 0,
    });
  }

  async claim(key: string, leaseMs: number): Promise<ClaimResult> {
    const current = this.#cache.get(key);
    if (current === DONE) return { state: 'done' };
    if (current !== undefined) return { state: 'in_progress' };
    const token = `lease-${++this.#leases}`;
    this.#cache.set(key, token, { ttl: ttlOf(leaseMs) });
    return { state: 'claimed', token };
  }

  async complete(key: string, token: string, retentionMs: number): Promise<boolean> {
    const current = this.#cache.get(key);
    if (current === DONE) return false;
    this.#cache.set(key, DONE, { ttl: ttlOf(retentionMs) });
    return current === undefined || current === token;
  }

  async renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    const current = this.#cache.get(key);
    if (current !== undefined && current !== token) return false;
    this.#cache.set(key, token, { ttl: ttlOf(leaseMs) });
    return true;
  }

  async release(key: string, token: string): Promise<boolean> {
    if (this.#cache.get(key) !== token) return false;
    this.#cache.delete(key);
    return true;
  }

  async bind(key: string, value: string, ttlMs: number): Promise<string | undefined> {
    const current = this.#cache.get(key);
    if (current !== undefined) return current;
    this.#cache.set(key, value, { ttl: ttlOf(ttlMs) });
    return undefined;
  }

  /** Keys currently held, expired ones excepted (for tests and diagnostics). */
  get size(): number {
    this.#cache.purgeStale();
    return this.#cache.size;
  }
}

function ttlOf(ms: number): number {
  return Math.max(1, Math.ceil(ms));
}

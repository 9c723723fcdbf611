import type { Awaitable } from '../awaitable.js';

/**
 * Claims make "run this once" safe across concurrent requests and several instances.
 *
 * A key is free, held by one worker under a lease (a random token), or done (kept for a retention
 * period so late duplicates are recognised). The interface maps one-to-one onto Redis:
 *
 * - `claim(key, leaseMs)`: `SET key <token> NX PX leaseMs`; when the SET fails, `GET key` tells
 *   `'done'` from anything else (a token: in progress).
 * - `complete(key, token, retentionMs)`: unless the key is `done` already, `SET key done PX retentionMs`.
 *   The work did run, so this holds even when our lease ran out and another attempt holds the key
 *   now: that attempt's own complete or release then finds it done, and no retry runs the work again.
 * - `renew(key, token, leaseMs)` (optional): unless another token or `done` holds the key,
 *   `SET key <token> PX leaseMs`, so a handler slower than the lease keeps its event.
 * - `release(key, token)`:
 *   `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end`
 * - `bind(key, value, ttlMs)`: `SET key value NX PX ttlMs`, answering what the key held when it was taken
 *   (the webhook replay guard binds a signature to the first event id it came with).
 *
 * Any method may throw (or reject) when the store is unreachable; callers turn that into a 503 and
 * never mark anything done that was not processed. A method may answer at once instead of with a
 * promise, as the memory store does: the webhook route then waits for nothing it need not.
 */

/** What `claim` answers: the key is now this worker's (with its token), someone else's, or done already. */
export type ClaimResult =
  | { state: 'claimed'; token: string }
  | { state: 'in_progress' }
  | { state: 'done' };

/** Where webhook claims live: `MemoryClaimStore` (one process), `RedisClaimStore` (shared), or your own by the rules above. */
export interface ClaimStore {
  /** Takes the key for `leaseMs` when it is free (or its lease ran out). */
  claim(key: string, leaseMs: number): Awaitable<ClaimResult>;
  /**
   * Marks the key done for `retentionMs` unless it is done already: the work ran. True when we still held
   * it or nobody did; false when it was done already, or held by another attempt (marked done all the same).
   */
  complete(key: string, token: string, retentionMs: number): Awaitable<boolean>;
  /**
   * Extends our lease to `leaseMs` from now, taking the key again if it is free. False when another attempt
   * holds it or it is done. Optional: without it, a handler slower than the lease may see a duplicate run beside it.
   */
  renew?(key: string, token: string, leaseMs: number): Awaitable<boolean>;
  /** Frees a key we still hold so the next attempt can claim it. False when the lease was lost. */
  release(key: string, token: string): Awaitable<boolean>;
  /** Sets the key to `value` for `ttlMs` unless it holds a value already: undefined when set now, else the value it holds. */
  bind(key: string, value: string, ttlMs: number): Awaitable<string | undefined>;
}

/** The value a completed key holds; lease tokens (random UUIDs, or `lease-<n>` in memory) never equal it. */
export const DONE = 'done';

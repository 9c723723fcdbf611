import { Secret } from '../secret.js';

/**
 * Where the commerce platform's admin token is cached, so several instances can share one token
 * instead of each logging in (Magento locks an account after repeated failed logins).
 *
 * Maps onto Redis as `GET key` / `SET key value PX ttlMs`. The value is a credential: a shared store
 * must be as private as the admin password. A refused login is kept beside the token
 * (`<key>|login-refused`: its code, message, time and how many in a row), so that the instances stop logging
 * in together: for 1, 2, 4, then 31 minutes as refusals follow one another, and 31 minutes more to count the next.
 * A store may throw (or reject) when it is unreachable: the library then keeps using its own copy of
 * the token, or logs in without the store.
 */
export interface AdminTokenStore {
  /** The cached token, or undefined when there is none or it expired. */
  get(key: string): Promise<string | undefined>;
  /** Caches `token` for `ttlMs`, replacing any previous one. */
  set(key: string, token: string, ttlMs: number): Promise<void>;
  /**
   * Optional, for a store shared by several instances: takes the refresh lock of `key` for `ttlMs`
   * (Redis `SET lock <random> NX PX ttlMs`) and answers its token, or undefined while another instance
   * holds it. With it, one instance logs in and the others poll `get` for its token; without it (the
   * in-memory store), each instance refreshes on its own, one request at a time.
   */
  acquireRefreshLock?(key: string, ttlMs: number): Promise<string | undefined>;
  /** Frees the lock taken by `acquireRefreshLock`, if `lockToken` still holds it (compare-and-delete). */
  releaseRefreshLock?(key: string, lockToken: string): Promise<void>;
}

/** Options of `new MemoryAdminTokenStore()`. */
export interface MemoryAdminTokenStoreOptions {
  /** Clock in milliseconds (the pay instance's `now`); `Date.now` by default. */
  now?: (() => number) | undefined;
}

/** Tokens in this process's memory (right for one instance); kept as Secrets so nothing prints them. */
export class MemoryAdminTokenStore implements AdminTokenStore {
  readonly #entries = new Map<string, { token: Secret; expiresAt: number }>();
  readonly #now: () => number;

  constructor(options: MemoryAdminTokenStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
  }

  async get(key: string): Promise<string | undefined> {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (this.#now() >= entry.expiresAt) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.token.reveal();
  }

  async set(key: string, token: string, ttlMs: number): Promise<void> {
    this.#entries.set(key, { token: new Secret(token), expiresAt: this.#now() + Math.max(1, ttlMs) });
  }
}

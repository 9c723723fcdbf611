/**
 * Where long-running jobs (the order sync) keep their position, so a crashed or stopped run resumes.
 *
 * Values are opaque strings (the sync stores a small JSON document). The interface maps one-to-one
 * onto Redis `GET key` / `SET key value`, or onto a row in the merchant's own database. A store may
 * throw (or reject) when it is unreachable; the sync then stops without losing its last saved position.
 */
export interface CheckpointStore {
  /** The value last saved under `key`, or undefined when none was (the sync then starts at the beginning). */
  get(key: string): Promise<string | undefined>;
  /** Saves `value` under `key`, replacing what was there; resolves once it is stored. */
  set(key: string, value: string): Promise<void>;
  /**
   * Optional, with renewLock and releaseLock: one run per checkpoint at a time. Takes the lock of `key`
   * for `ttlMs` (Redis `SET lock <random> NX PX ttlMs`) and answers its token, or undefined while another
   * run holds it. Without these methods, two overlapping runs on one checkpoint both deliver every order
   * and race to save the position.
   */
  acquireLock?(key: string, ttlMs: number): Promise<string | undefined>;
  /**
   * Extends the lock to `ttlMs` from now for `lockToken`, taking it again if it ran out and nobody took it
   * meanwhile (a run stalled past its hold but alone loses nothing); false while another run holds it.
   */
  renewLock?(key: string, lockToken: string, ttlMs: number): Promise<boolean>;
  /** Frees the lock if `lockToken` still holds it (compare-and-delete). */
  releaseLock?(key: string, lockToken: string): Promise<void>;
}

/** Options of `new MemoryCheckpointStore()`. */
export interface MemoryCheckpointStoreOptions {
  /** Clock in milliseconds, for lock expiry; `Date.now` by default. */
  now?: (() => number) | undefined;
}

/** Checkpoints in this process's memory: a restarted process starts over. Use a shared or file store to resume across restarts. */
export class MemoryCheckpointStore implements CheckpointStore {
  readonly #values = new Map<string, string>();
  readonly #locks = new Map<string, { token: string; until: number }>();
  readonly #now: () => number;
  /** Lock tokens only need to differ within this store. */
  #lockCount = 0;

  constructor(options: MemoryCheckpointStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
  }

  async get(key: string): Promise<string | undefined> {
    return this.#values.get(key);
  }

  async set(key: string, value: string): Promise<void> {
    this.#values.set(key, value);
  }

  async acquireLock(key: string, ttlMs: number): Promise<string | undefined> {
    if (this.#held(key)) return undefined;
    const token = `lock-${++this.#lockCount}`;
    this.#locks.set(key, { token, until: this.#now() + ttlMs });
    return token;
  }

  async renewLock(key: string, lockToken: string, ttlMs: number): Promise<boolean> {
    const lock = this.#held(key);
    if (lock && lock.token !== lockToken) return false;
    this.#locks.set(key, { token: lockToken, until: this.#now() + ttlMs });
    return true;
  }

  async releaseLock(key: string, lockToken: string): Promise<void> {
    if (this.#locks.get(key)?.token === lockToken) this.#locks.delete(key);
  }

  /** The lock of `key` while it lasts. */
  #held(key: string): { token: string; until: number } | undefined {
    const lock = this.#locks.get(key);
    return lock && lock.until > this.#now() ? lock : undefined;
  }
}

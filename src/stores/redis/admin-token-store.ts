import type { AdminTokenStore } from '../../core/stores/admin-token-store.js';
import { asString, ms, type RedisCommands } from './client.js';
import { freeLock, takeLock } from './lock.js';

/**
 * The commerce admin token in Redis (`<prefix>admin-token:<key>`, `SET … PX ttl`), shared by every
 * instance, with a refresh lock (`<prefix>admin-token-lock:<key>`, `SET … NX PX`) so one instance logs
 * in at a time while the others poll for its token. The token is a credential: keep this Redis private.
 */
export class RedisAdminTokenStore implements AdminTokenStore {
  readonly #redis: RedisCommands;
  readonly #prefix: string;

  constructor(redis: RedisCommands, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  async get(key: string): Promise<string | undefined> {
    return asString(await this.#redis.command(['GET', `${this.#prefix}admin-token:${key}`]));
  }

  async set(key: string, token: string, ttlMs: number): Promise<void> {
    await this.#redis.command(['SET', `${this.#prefix}admin-token:${key}`, token, 'PX', ms(ttlMs)]);
  }

  acquireRefreshLock(key: string, ttlMs: number): Promise<string | undefined> {
    return takeLock(this.#redis, `${this.#prefix}admin-token-lock:${key}`, ttlMs);
  }

  releaseRefreshLock(key: string, lockToken: string): Promise<void> {
    return freeLock(this.#redis, `${this.#prefix}admin-token-lock:${key}`, lockToken);
  }
}

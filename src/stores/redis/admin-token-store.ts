import type { AdminTokenStore } from '../../core/stores/admin-token-store.js';
import { asString, ms, type RedisCommands } from './client.js';
import { RELEASE } from './scripts.js';


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

  async acquireRefreshLock(key: string, ttlMs: number): Promise<string | undefined> {
    const lockToken = globalThis.crypto.randomUUID();
    const lockKey = `${this.#prefix}admin-token-lock:${key}`;
    // A lock taken after the deadline (this call already failed) is given back, not left to expire.
    const giveBack = (reply: unknown) => {
      if (reply !== null && reply !== undefined) this.#redis.script(RELEASE, [lockKey], [lockToken]).catch(() => {});
    };
    const reply = await this.#redis.command(['SET', lockKey, lockToken, 'NX', 'PX', ms(ttlMs)], giveBack);
    return reply === null || reply === undefined ? undefined : lockToken;
  }

  async releaseRefreshLock(key: string, lockToken: string): Promise<void> {
    await this.#redis.script(RELEASE, [`${this.#prefix}admin-token-lock:${key}`], [lockToken]);
  }
}

import { lostHold } from '../../core/commerce/sync-lock.js';
import type { CheckpointStore } from '../../core/stores/checkpoint-store.js';
import { asString, ms, type RedisCommands } from './client.js';
import { freeLock, takeLock } from './lock.js';
import { REPLACE_OWN, SET_WHILE_HELD } from './scripts.js';

/**
 * Sync positions in Redis: `GET` / `SET <prefix>checkpoint:<name>`, kept until overwritten; and one run
 * per checkpoint across instances, through `<prefix>checkpoint-lock:<name>` (`SET … NX PX`, renewed and
 * released only by the token that took it). A position saved under a lock this store took is written only
 * while the lock is still its own.
 */
export class RedisCheckpointStore implements CheckpointStore {
  readonly #redis: RedisCommands;
  readonly #prefix: string;
  /** The lock tokens this store holds, by checkpoint name. */
  readonly #held = new Map<string, string>();

  constructor(redis: RedisCommands, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  async get(key: string): Promise<string | undefined> {
    return asString(await this.#redis.command(['GET', `${this.#prefix}checkpoint:${key}`]));
  }

  async set(key: string, value: string): Promise<void> {
    const token = this.#held.get(key);
    if (token === undefined) {
      await this.#redis.command(['SET', `${this.#prefix}checkpoint:${key}`, value]);
      return;
    }
    const saved = await this.#redis.script(SET_WHILE_HELD, [`${this.#prefix}checkpoint:${key}`, this.#lockKey(key)], [value, token]);
    if (Number(saved) !== 1) throw lostHold(key);
  }

  async acquireLock(key: string, ttlMs: number): Promise<string | undefined> {
    const token = await takeLock(this.#redis, this.#lockKey(key), ttlMs);
    if (token !== undefined) this.#held.set(key, token);
    return token;
  }

  async renewLock(key: string, lockToken: string, ttlMs: number): Promise<boolean> {
    return Number(await this.#redis.script(REPLACE_OWN, [this.#lockKey(key)], [lockToken, lockToken, ms(ttlMs)])) === 1;
  }

  releaseLock(key: string, lockToken: string): Promise<void> {
    if (this.#held.get(key) === lockToken) this.#held.delete(key);
    return freeLock(this.#redis, this.#lockKey(key), lockToken);
  }

  #lockKey(key: string): string {
    return `${this.#prefix}checkpoint-lock:${key}`;
  }
}

import type { CheckpointStore } from '../../core/stores/checkpoint-store.js';
import { asString, ms, type RedisCommands } from './client.js';
import { freeLock, takeLock } from './lock.js';
import { REPLACE_OWN } from './scripts.js';

/**
 * Sync positions in Redis: `GET` / `SET <prefix>checkpoint:<name>`, kept until overwritten; and one run
 * per checkpoint across instances, through `<prefix>checkpoint-lock:<name>` (`SET … NX PX`, renewed and
 * released only by the token that took it).
 */
export class RedisCheckpointStore implements CheckpointStore {
  readonly #redis: RedisCommands;
  readonly #prefix: string;

  constructor(redis: RedisCommands, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  async get(key: string): Promise<string | undefined> {
    return asString(await this.#redis.command(['GET', `${this.#prefix}checkpoint:${key}`]));
  }

  async set(key: string, value: string): Promise<void> {
    await this.#redis.command(['SET', `${this.#prefix}checkpoint:${key}`, value]);
  }

  acquireLock(key: string, ttlMs: number): Promise<string | undefined> {
    return takeLock(this.#redis, this.#lockKey(key), ttlMs);
  }

  async renewLock(key: string, lockToken: string, ttlMs: number): Promise<boolean> {
    return Number(await this.#redis.script(REPLACE_OWN, [this.#lockKey(key)], [lockToken, lockToken, ms(ttlMs)])) === 1;
  }

  releaseLock(key: string, lockToken: string): Promise<void> {
    return freeLock(this.#redis, this.#lockKey(key), lockToken);
  }

  #lockKey(key: string): string {
    return `${this.#prefix}checkpoint-lock:${key}`;
  }
}

import type { CheckpointStore } from '../../core/stores/checkpoint-store.js';
import { asString, type RedisCommands } from './client.js';

/** Sync positions in Redis: `GET` / `SET <prefix>checkpoint:<name>`, kept until overwritten. */
export class RedisCheckpointStore implements CheckpointStore {
  readonly #redis: RedisCommands;
  readonly #prefix: string;

  constructor(redis: RedisCommands, prefix: string) {
    this.#redis = redis;
    this.#prefix = `${prefix}checkpoint:`;
  }

  async get(key: string): Promise<string | undefined> {
    return asString(await this.#redis.command(['GET', this.#prefix + key]));
  }

  async set(key: string, value: string): Promise<void> {
    await this.#redis.command(['SET', this.#prefix + key, value]);
  }
}

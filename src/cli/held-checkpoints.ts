import type { CheckpointStore } from '../core/stores/checkpoint-store.js';

/**
 * Positions the sync saves, held in memory until `commit()` writes the last of them: for output whose arrival
 * only a run that finished vouches for (a pipe, whose reader may not have read what it took). A run stopped
 * any other way, by a second Ctrl-C or a kill included, leaves the store as it found it.
 */
export class HeldCheckpoints implements CheckpointStore {
  readonly #held = new Map<string, string>();

  constructor(private readonly store: CheckpointStore) {}

  async get(key: string): Promise<string | undefined> {
    return this.#held.has(key) ? this.#held.get(key) : this.store.get(key);
  }

  async set(key: string, value: string): Promise<void> {
    this.#held.set(key, value);
  }

  async commit(): Promise<void> {
    for (const [key, value] of this.#held) await this.store.set(key, value);
    this.#held.clear();
  }
}

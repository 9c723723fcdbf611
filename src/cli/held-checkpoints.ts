import type { CheckpointStore } from '../core/stores/checkpoint-store.js';

/**
 * Positions the sync saves, held in memory until `commit()` writes the last of them: for output whose arrival
 * a stop cannot vouch for (a pipe, whose reader may have been stopped with the run). A run stopped before it
 * commits, by a second Ctrl-C or a kill included, leaves the store as it found it.
 */
export class HeldCheckpoints implements CheckpointStore {
  readonly #held = new Map<string, string>();
  #committed = false;

  constructor(private readonly store: CheckpointStore) {}

  async get(key: string): Promise<string | undefined> {
    return this.#held.has(key) ? this.#held.get(key) : this.store.get(key);
  }

  async set(key: string, value: string): Promise<void> {
    this.#held.set(key, value);
  }

  /** Whether `commit()` wrote to the store (or tried to). */
  get committed(): boolean {
    return this.#committed;
  }

  async commit(): Promise<void> {
    this.#committed = true;
    for (const [key, value] of this.#held) await this.store.set(key, value);
    this.#held.clear();
  }
}

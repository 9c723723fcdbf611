/**
 * Where long-running jobs (the order sync) keep their position, so a crashed or stopped run resumes.
 *
 * Values are opaque strings (the sync stores a small JSON document). The interface maps one-to-one
 * onto Redis `GET key` / `SET key value`, or onto a row in the merchant's own database. A store may
 * throw (or reject) when it is unreachable; the sync then stops without losing its last saved position.
 */
export interface CheckpointStore {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string): Promise<void>;
}

/** Checkpoints in this process's memory: a restarted process starts over. Use a shared or file store to resume across restarts. */
export class MemoryCheckpointStore implements CheckpointStore {
  readonly #values = new Map<string, string>();

  async get(key: string): Promise<string | undefined> {
    return this.#values.get(key);
  }

  async set(key: string, value: string): Promise<void> {
    this.#values.set(key, value);
  }
}

import { readFile } from 'node:fs/promises';
import type { CheckpointStore } from '../core/stores/checkpoint-store.js';
import { EXIT, ExitError } from './io.js';
import { replaceFile } from './replace-file.js';

/**
 * Checkpoints in a JSON file (`{ "<name>": "<value>" }`), replaced atomically (write, fsync, then rename)
 * so a crash or a power loss leaves the old position or the new one, never half a file. `beforeSet` runs
 * first: the CLI flushes its output to disk there, so a saved position never covers orders that are not.
 */
export class FileCheckpointStore implements CheckpointStore {
  constructor(
    private readonly path: string,
    private readonly beforeSet: () => Promise<void> = async () => {},
  ) {}

  private async read(): Promise<Record<string, string>> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw new ExitError(`The checkpoint file ${this.path} cannot be read (${(error as Error).message}); check --checkpoint.`, EXIT.failed);
    }
    try {
      const value: unknown = JSON.parse(text);
      if (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === 'string')) return value as Record<string, string>;
    } catch {
      // reported below
    }
    throw new ExitError(`The checkpoint file ${this.path} is not a checkpoint file written by paywidget; move it away or pass another --checkpoint.`, EXIT.failed);
  }

  async get(key: string): Promise<string | undefined> {
    const all = await this.read();
    return Object.hasOwn(all, key) ? all[key] : undefined;
  }

  async set(key: string, value: string): Promise<void> {
    await this.beforeSet();
    await this.write({ ...(await this.read()), [key]: value });
  }

  /**
   * Puts back a value read earlier (undefined: none), without `beforeSet`: for a run whose output went where
   * it cannot be trusted to have arrived (a reader that went away), whose position must not stand.
   */
  async restore(key: string, value: string | undefined): Promise<void> {
    const { [key]: _dropped, ...others } = await this.read();
    await this.write(value === undefined ? others : { ...others, [key]: value });
  }

  private async write(all: Record<string, string>): Promise<void> {
    try {
      await replaceFile(this.path, `${JSON.stringify(all, null, 2)}\n`, { sync: true });
    } catch (error) {
      // A full disk, a read-only one: the file keeps the position before this one (replaced whole, or not at all).
      throw new ExitError(`The checkpoint file ${this.path} could not be written (${(error as Error).message}); it still holds the position before. Free space or check --checkpoint, then run again to resume.`, EXIT.failed);
    }
  }
}

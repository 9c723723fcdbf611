import { readFile, rename, writeFile } from 'node:fs/promises';
import type { CheckpointStore } from '../core/stores/checkpoint-store.js';

/**
 * Checkpoints in a JSON file (`{ "<name>": "<value>" }`), replaced atomically (write, then rename) so a
 * crash leaves the old position or the new one, never half a file. `beforeSet` runs first: the CLI
 * flushes its output there, so a saved position never covers orders still in a buffer.
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
      throw error;
    }
    try {
      const value: unknown = JSON.parse(text);
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, string>;
    } catch {
      // reported below
    }
    throw new Error(`The checkpoint file ${this.path} is not a checkpoint file written by paywidget; move it away or pass another --checkpoint.`);
  }

  async get(key: string): Promise<string | undefined> {
    const value = (await this.read())[key];
    return typeof value === 'string' ? value : undefined;
  }

  async set(key: string, value: string): Promise<void> {
    await this.beforeSet();
    const all = { ...(await this.read()), [key]: value };
    const temporary = `${this.path}.${process.pid}.tmp`;
    await writeFile(temporary, `${JSON.stringify(all, null, 2)}\n`);
    await rename(temporary, this.path);
  }
}

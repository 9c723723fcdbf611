import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileCheckpointStore } from '../../src/cli/file-checkpoint-store.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function checkpointPath(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'paywidget-checkpoint-'));
  dirs.push(dir);
  return join(dir, 'sync.json');
}

describe('FileCheckpointStore', () => {
  it('flushes the output before it writes a position, and writes none when the flush fails (a full disk)', async () => {
    const path = await checkpointPath();
    const seenByFlush: Array<string | undefined> = [];
    let flush = async () => {};
    const store = new FileCheckpointStore(path, async () => {
      seenByFlush.push(await readFile(path, 'utf8').catch(() => undefined));
      await flush();
    });
    await store.set('orders', 'position 1');
    await store.set('orders', 'position 2');
    // Each flush ran while the file still held the position before: the output is on disk before the position moves past it.
    expect(seenByFlush).toEqual([undefined, expect.stringContaining('position 1')]);

    flush = () => Promise.reject(new Error('ENOSPC: no space left on device'));
    await expect(store.set('orders', 'position 3')).rejects.toThrow('ENOSPC');
    expect(await store.get('orders')).toBe('position 2');
  });

  it('names the file and what to do when the position cannot be written, not an unexpected error', async () => {
    const path = await checkpointPath();
    const store = new FileCheckpointStore(path);
    await store.set('orders', 'position 1');
    // Its directory gone (as unwritable as a full disk, whoever runs the test, root included).
    await rm(join(path, '..'), { recursive: true });
    const error = await store.set('orders', 'position 2').then(() => undefined, (e: unknown) => e as Error & { exitCode?: number });
    expect(error?.message).toMatch(new RegExp(`^The checkpoint file ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} could not be written \\(ENOENT.*\\); it still holds the position before`));
    expect(error?.exitCode).toBe(1);
  });
});

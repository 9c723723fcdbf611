import { open, rename, rm } from 'node:fs/promises';

/**
 * Replaces `path` with `text` whole: written to a file of its own, then renamed over it, so a crash, or
 * two runs ending together, leave the old content or the new, never half a file. `sync` puts it on disk
 * before the rename (else a power loss after it can leave an empty file). A failed write or rename
 * removes its file, so a path that cannot be replaced (a directory) leaves nothing behind.
 */
export async function replaceFile(path: string, text: string, { mode, sync = false }: { mode?: number; sync?: boolean } = {}): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  const file = await open(temporary, 'w', mode);
  try {
    try {
      await file.writeFile(text);
      if (sync) await file.sync();
    } finally {
      await file.close();
    }
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => {}); // the first failure is the one to report
    throw error;
  }
}

import { open } from 'node:fs/promises';

const NEWLINE = 0x0a;

/**
 * Cuts an NDJSON file back to its last whole line. A run stopped mid-line (a full disk, a power loss
 * after the last sync) leaves part of one order at the end; appending after it would glue the next
 * order to the fragment. The fragment's order is past the saved position, so the resumed run sends it again.
 */
export async function cutTornLine(file: string): Promise<void> {
  const handle = await open(file, 'r+').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (!handle) return;
  try {
    const { size } = await handle.stat();
    const chunk = Buffer.alloc(Math.min(size, 64 * 1024));
    // Backwards a chunk at a time: a whole file ends at once on its first, its last byte a newline.
    for (let end = size; end > 0; ) {
      const start = Math.max(0, end - chunk.length);
      const { bytesRead } = await handle.read(chunk, 0, end - start, start);
      const newline = chunk.subarray(0, bytesRead).lastIndexOf(NEWLINE);
      if (newline !== -1) {
        if (start + newline + 1 < size) await handle.truncate(start + newline + 1);
        return;
      }
      end = start;
    }
    if (size > 0) await handle.truncate(0); // not one whole line
  } finally {
    await handle.close();
  }
}

import { readlink, realpath } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';

/** More links in a row than this is a loop (Linux's own limit is 40). */
const MAX_LINKS = 40;

/**
 * The file a path names, its links followed even when the last one points at a file not there yet (a
 * `latest.ndjson` linked to today's export): a file written there is then what the link reads, where
 * renaming over the link itself would replace it with a regular file. When nothing is there, the path
 * within its directory's real path.
 */
export async function resolveLinks(file: string): Promise<string> {
  let path = resolve(file);
  for (let links = 0; links < MAX_LINKS; links++) {
    const real = await realpath(path).catch(() => undefined);
    if (real !== undefined) return real;
    const target = await readlink(path).catch(() => undefined);
    if (target === undefined) break; // not a link: a file not there yet
    // Relative to the link's real directory, as the kernel reads it: through a linked directory, '..' is its parent.
    path = resolve(await realpath(dirname(path)).catch(() => dirname(path)), target);
  }
  const directory = await realpath(dirname(path)).catch(() => dirname(path));
  return join(directory, basename(path));
}

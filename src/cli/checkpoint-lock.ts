import { open, readFile, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { EXIT, ExitError } from './io.js';

interface LockOwner {
  pid: number;
  host: string;
  startedAt: string;
}

/**
 * One `orders sync` per checkpoint file at a time. Two overlapping runs (a cron job that outlasts its
 * interval) would both write every order and race to save the position. The lock is `<file>.lock`,
 * created exclusively, naming the run that holds it; a lock left by a run that died (its pid is gone,
 * on this host) is taken over. Written by hand rather than with a lock library: an exclusive create
 * and a pid check are all it needs, where proper-lockfile would bring three packages and a timer.
 * Resolves to the release.
 */
export async function lockCheckpoint(file: string): Promise<() => Promise<void>> {
  const path = `${file}.lock`;
  const me: LockOwner = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString() };
  let owner: LockOwner | undefined;
  // Three tries: the lock may vanish between a failed create and the read, or be a dead run's (or a
  // half-made one's) to take over.
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const handle = await open(path, 'wx');
      try {
        await handle.writeFile(`${JSON.stringify(me)}\n`);
      } finally {
        await handle.close();
      }
      return () => unlink(path).catch(() => {});
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const seen = await readFile(path, 'utf8').catch(() => undefined);
    if (seen === undefined) continue; // released between our create and our read: try again
    owner = parseOwner(seen);
    if (owner ? !isGone(owner) : !(await isLeftover(path))) break;
    // A dead run's lock: removed only if it is still the one we read (another run may be taking it over too).
    if ((await readFile(path, 'utf8').catch(() => undefined)) === seen) await unlink(path).catch(() => {});
  }
  throw busy(file, path, owner);
}

function parseOwner(text: string): LockOwner | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockOwner>;
    return Number.isSafeInteger(value.pid) && typeof value.host === 'string' ? (value as LockOwner) : undefined;
  } catch {
    return undefined;
  }
}

/** A run writes its lock within milliseconds of creating it; one still unreadable after this was left half-made. */
const LOCK_WRITE_GRACE_MS = 10_000;

/**
 * An unreadable lock (empty, or cut short) that is not being written now: its run died between creating
 * it and writing its name (a crash, a full disk, a power loss). Without this, every later run would
 * answer "busy" (75) and a scheduler would retry for ever.
 */
async function isLeftover(path: string): Promise<boolean> {
  const info = await stat(path).catch(() => undefined);
  return info !== undefined && Date.now() - info.mtimeMs > LOCK_WRITE_GRACE_MS;
}

/** True only when the owner ran on this host and its process no longer exists. */
function isGone(owner: LockOwner): boolean {
  if (owner.host !== hostname()) return false;
  try {
    process.kill(owner.pid, 0); // signal 0: only asks whether the process exists
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

function busy(file: string, path: string, owner: LockOwner | undefined): ExitError {
  const who = owner ? `pid ${owner.pid} on ${owner.host}, started ${owner.startedAt}` : 'a run whose lock file cannot be read';
  return new ExitError(`another 'paywidget orders sync' is using the checkpoint ${file} (${who}). Let it finish, or if it is no longer running, delete ${path}.`, EXIT.busy);
}

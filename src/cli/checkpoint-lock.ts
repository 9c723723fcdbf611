import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { link, open, readFile, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { hostname, uptime } from 'node:os';
import { dirname } from 'node:path';
import { EXIT, ExitError } from './io.js';
import { isRunning } from './processes.js';

interface LockOwner {
  pid: number;
  host: string;
  startedAt: string;
  /** Tells this run's lock from any other, even one of the same process. */
  token: string;
  /** How often the run touches its lock (absent in locks of versions before the heartbeat). */
  heartbeatMs?: number;
}

/** How often a run touches its lock's mtime, so a run elsewhere can tell it is alive. */
const HEARTBEAT_MS = 10_000;
/** Missed heartbeats after which a lock from another host is a dead run's (on this host, the pid decides). */
const MISSED_HEARTBEATS = 6;

/**
 * One `orders sync` per checkpoint file at a time. Two overlapping runs (a cron job that outlasts its
 * interval) would both write every order and race to save the position. The lock is `<file>.lock`,
 * naming the run that holds it: written whole to a file of its own, then hard-linked into place, which
 * fails while another run holds it, so a lock is never seen empty or half-written. A lock left by a run
 * that died (on this host: its pid is gone, or is this very process, or is another process's started since, or it
 * predates the last boot) is
 * taken over. So is one from another host whose run stopped touching it (its heartbeat): the only sign of
 * life that reaches across hosts, such as to a container restarted under a new hostname on a shared volume.
 * Written by hand rather than with a lock library: a hard link, a pid check and a touch are all it
 * needs, where proper-lockfile would bring three packages.
 * Resolves to the release, which stops the heartbeat and removes the lock only while it is still this run's.
 */
export async function lockCheckpointFile(file: string, heartbeatMs = HEARTBEAT_MS, linkFile: typeof link = link): Promise<() => Promise<void>> {
  const path = `${file}.lock`;
  const me: LockOwner = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString(), token: randomUUID(), heartbeatMs };
  const mine = `${JSON.stringify(me)}\n`;
  const draft = `${path}.${me.token}`;
  await writeFile(draft, mine, { flag: 'wx' }).catch((error: NodeJS.ErrnoException) => {
    throw cannotLock(file, path, error);
  });
  // Known as ours before it appears, so a run of this process that reads it never takes it for a dead one.
  heldHere.add(me.token);
  let owner: LockOwner | undefined;
  let linked = false;
  try {
    // Three tries: the lock may vanish between a failed link and the read, or be a dead run's (or a
    // half-made one's) to take over.
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await placeLock(draft, path, mine, linkFile);
        linked = true;
        let touching: Promise<void> | undefined;
        const heartbeat = setInterval(() => void (touching = touch(path)), heartbeatMs).unref();
        return async () => {
          clearInterval(heartbeat);
          await touching; // none lands after the release
          if ((await readFile(path, 'utf8').catch(() => undefined)) === mine) await unlink(path).catch(() => {});
          heldHere.delete(me.token);
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw cannotLock(file, path, error as NodeJS.ErrnoException);
      }
      const seen = await readFile(path, 'utf8').catch(() => undefined);
      if (seen === undefined) continue; // released between our link and our read: try again
      owner = parseOwner(seen);
      if (owner ? !(isGone(owner) || (await isSilent(path, owner))) : !(await isLeftover(path))) break;
      await removeDeadLock(path, seen);
    }
  } finally {
    await unlink(draft).catch(() => {});
    if (!linked) heldHere.delete(me.token);
  }
  throw busy(file, path, owner);
}

/** What link(2) answers on a filesystem without hard links: FAT and exFAT drives, some SMB and FUSE mounts. */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

/**
 * Puts the lock in place whole, by a hard link to its draft. Without hard links, creates it exclusively and writes
 * it: a run that reads it in between finds it empty, and takes it for busy (LOCK_WRITE_GRACE_MS). EEXIST either way while another run holds it.
 */
async function placeLock(draft: string, path: string, mine: string, linkFile: typeof link): Promise<void> {
  try {
    await linkFile(draft, path);
  } catch (error) {
    if (!NO_HARD_LINKS.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
    await writeFile(path, mine, { flag: 'wx' });
  }
}

/** The tokens of the locks this process holds. A lock naming this pid with another token was left by an earlier process that had the same pid (a container's pid 1). */
const heldHere = new Set<string>();

/**
 * Removes the dead run's lock `seen`, unless another run replaced it meanwhile. Checking and removing are
 * two steps, so runs that found the same dead lock take turns under `<lock>.takeover`: without it, one
 * could check, another remove it and lock, and the first then remove that new lock, leaving two runs
 * syncing. A run that finds the guard taken leaves the takeover to its holder and tries again.
 */
async function removeDeadLock(path: string, seen: string): Promise<void> {
  const guard = `${path}.takeover`;
  let handle;
  try {
    handle = await open(guard, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Held for milliseconds; one still there long after was left by a run that died taking over.
    if (await isLeftover(guard)) await unlink(guard).catch(() => {});
    return;
  }
  try {
    if ((await readFile(path, 'utf8').catch(() => undefined)) === seen) await unlink(path).catch(() => {});
  } finally {
    await handle.close();
    await unlink(guard).catch(() => {});
  }
}

function parseOwner(text: string): LockOwner | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockOwner>;
    return Number.isSafeInteger(value.pid) && value.pid! > 0 && typeof value.host === 'string' ? (value as LockOwner) : undefined;
  } catch {
    return undefined;
  }
}

/** A run writes its lock within milliseconds of creating it; one still unreadable after this was left half-made. */
const LOCK_WRITE_GRACE_MS = 10_000;

/**
 * An unreadable lock (empty, or cut short) that is not being written now: its run died between creating
 * it and writing its name (a crash, a full disk, a power loss). Without this, every later run would
 * answer "busy" (75) and a scheduler would retry for ever. The same age tells a takeover guard left behind.
 */
async function isLeftover(path: string): Promise<boolean> {
  const info = await stat(path).catch(() => undefined);
  return info !== undefined && Date.now() - info.mtimeMs > LOCK_WRITE_GRACE_MS;
}

/** Touching a lock another run took over meanwhile is harmless: it only says a live run holds it, which is true. */
async function touch(path: string): Promise<void> {
  const now = new Date();
  await utimes(path, now, now).catch(() => {});
}

/**
 * A lock from another host whose run has not touched it for several heartbeats: the run is gone. Compares
 * the writer's clock (it sets the mtime) with ours, so hosts sharing a volume must agree within a minute.
 * Locks of earlier versions carry no heartbeat and are never taken for silent.
 */
async function isSilent(path: string, owner: LockOwner): Promise<boolean> {
  // On this host the pid says for sure: a run paused for a while (Ctrl-Z, a debugger) still holds its lock.
  if (owner.host === hostname() || !(Number.isSafeInteger(owner.heartbeatMs) && owner.heartbeatMs! > 0)) return false;
  const info = await stat(path).catch(() => undefined);
  return info !== undefined && Date.now() - info.mtimeMs > owner.heartbeatMs! * MISSED_HEARTBEATS;
}

/** Locks written this long before the computed boot time are from before it (the clock may have been stepped since). */
const BOOT_MARGIN_MS = 60_000;

/**
 * True only when the owner ran on this host and is not running now: its process no longer exists, or its
 * pid has been reused since, by this very process or after a reboot.
 */
function isGone(owner: LockOwner): boolean {
  if (owner.host !== hostname()) return false;
  if (owner.pid === process.pid) return !heldHere.has(owner.token);
  if (Date.parse(owner.startedAt) < Date.now() - uptime() * 1000 - BOOT_MARGIN_MS) return true;
  // A pid in use again (containers hand out low pids quickly): its process started after the lock was written.
  const started = processStartMs(owner.pid);
  if (started !== undefined && started > Date.parse(owner.startedAt) + PID_REUSE_MARGIN_MS) return true;
  return !isRunning(owner.pid);
}

/**
 * As for the boot time: /proc's start times move with a step of the wall clock (NTP after a suspend), the lock's
 * does not, so a live run is not taken for a reused pid unless its process started well after the lock.
 */
const PID_REUSE_MARGIN_MS = BOOT_MARGIN_MS;

/** When process `pid` started, in ms since the epoch, from Linux's /proc; undefined elsewhere, or when it is gone. */
function processStartMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the command name (which may hold spaces and parentheses), field 22 of stat(5): the start, in ticks since boot.
    const ticks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    const boot = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1];
    // USER_HZ, the unit of /proc's clock ticks, is 100 on Linux whatever the kernel's HZ.
    return Number.isFinite(ticks) && boot !== undefined ? Number(boot) * 1000 + ticks * 10 : undefined;
  } catch {
    return undefined;
  }
}

function cannotLock(file: string, path: string, error: NodeJS.ErrnoException): ExitError {
  const why = error.code === 'ENOENT' ? `ENOENT: the directory ${dirname(file)} does not exist` : error.code ?? error.message;
  return new ExitError(`The checkpoint file ${file} cannot be locked (${why}): paywidget writes ${path} beside it. Check --checkpoint: its directory must exist and be writable.`, EXIT.failed);
}

function busy(file: string, path: string, owner: LockOwner | undefined): ExitError {
  const who = owner ? `pid ${owner.pid} on ${owner.host}, started ${owner.startedAt}` : 'a run whose lock file cannot be read';
  // On this host the pid decides, not the heartbeat: the wait applies to a lock from another host only.
  const wait = owner?.heartbeatMs && owner.host !== hostname() ? ` A lock its run stops touching is taken over after ${Math.round((owner.heartbeatMs * MISSED_HEARTBEATS) / 1000)} s.` : '';
  return new ExitError(`another 'paywidget orders sync' is using the checkpoint ${file} (${who}). Let it finish, or if it is no longer running, delete ${path}.${wait}`, EXIT.busy);
}

/** Where `orders sync` writes its NDJSON: stdout or the --out file, flushed to disk before each checkpoint save. */
import { constants, createWriteStream, fdatasync, fstat as fstatCallback, open as openCallback } from 'node:fs';
import { chmod, chown, readdir, rename, rm, stat } from 'node:fs/promises';
import { Socket } from 'node:net';
import { basename, dirname, join } from 'node:path';
import type { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { EXIT, ExitError, type CliIo } from './io.js';
import { isRunning } from './processes.js';
import { resolveLinks } from './resolve-links.js';
import { cutTornLine } from './torn-line.js';
import { sleep } from '../core/sleep.js';

const openFile = promisify(openCallback);
const fstat = promisify(fstatCallback);

/**
 * Puts what was written to the stream on disk when it is a file (`--out`, or stdout redirected to one),
 * so that after a power loss the checkpoint never covers orders the file lost. Pipes and terminals
 * cannot be synced (EINVAL), and need not be: what they took is the reader's.
 */
export function syncToDisk(stream: Writable): Promise<void> {
  const fd = (stream as { fd?: unknown }).fd;
  if (typeof fd !== 'number') return Promise.resolve();
  return new Promise((resolve, reject) => {
    fdatasync(fd, (error) => (error && !UNSYNCABLE.has(error.code ?? '') ? reject(error) : resolve()));
  });
}
const UNSYNCABLE = new Set(['EINVAL', 'ENOTSUP', 'EOPNOTSUPP']);

/**
 * Whether the output (a stream, or the file --out names) is a pipe or a socket, whose reader may not have read what
 * it took: stopped together with it (Ctrl-C reaches the whole pipeline), `gzip` or `psql` leave a cut file or a
 * rolled-back load. A stream without a descriptor (a test's) is none.
 */
export async function isPipe(output: Writable | string): Promise<boolean> {
  const fd = typeof output === 'string' ? undefined : (output as { fd?: unknown }).fd;
  const stats = typeof output === 'string' ? await stat(output).catch(() => undefined)
    : typeof fd === 'number' ? await fstat(fd).catch(() => undefined)
    : undefined;
  return stats !== undefined && (stats.isFIFO() || stats.isSocket());
}

/**
 * A FIFO opened for writing without blocking a thread of libuv's pool while no reader has it open (ENXIO): Ctrl-C's
 * exit would wait for that thread. Tried again every 100 ms until a reader comes, or Ctrl-C (its reason is thrown).
 */
async function openFifo(path: string, append: boolean, signal: AbortSignal | undefined): Promise<number> {
  const flags = constants.O_WRONLY | constants.O_NONBLOCK | (append ? constants.O_APPEND : 0);
  for (;;) {
    try {
      return await openFile(path, flags);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENXIO') throw error;
    }
    if (!(await sleep(100, signal))) throw signal!.reason;
  }
}

const PATH_ERRORS = new Set(['ENOENT', 'ENOTDIR', 'EISDIR', 'EACCES', 'EPERM', 'EROFS']);

/** The NDJSON output: stdout, or the --out file, opened at the first order (or the end of a run with none). */
export interface Output {
  /** The stream if it is open: stdout always is. */
  readonly current: Writable | undefined;
  open(): Promise<Writable>;
  /**
   * Ends the output; a whole-file one (see `output`) replaces the file when the run is `complete`, else is dropped.
   * `abandon`: what the file (a FIFO) has not taken yet is dropped, not waited for.
   */
  close(complete: boolean, abandon?: boolean): Promise<void>;
}

/** How the --out file is written: appended to (resuming from a checkpoint), or started over (`whole`: replaced only when the run completes). */
export interface OutputMode {
  append: boolean;
  /** No checkpoint: a run that stops part-way has no next run to finish the file, so it leaves the old one as it was. */
  whole: boolean;
}

/**
 * A run that fails before its first order (no configuration, a refused login, a platform that is down)
 * leaves the --out file as it was, instead of an empty one; without a checkpoint, so does any run that does not
 * finish (its orders go to a file of their own, renamed over --out at the end), rather than leave half of an export
 * in place of yesterday's. `onError` gets the stream's errors, those of the file naming --out.
 */
export function output(io: CliIo, file: string | undefined, mode: OutputMode, onError: (error: Error) => void): Output {
  const { append } = mode;
  if (!file) {
    // A full disk under `>> orders.ndjson`: named, with what it leaves (the shell opened the file; only --out can be repaired).
    const onStdoutError = (error: NodeJS.ErrnoException) => onError(error.code === 'EPIPE' ? error : new ExitError(`Cannot write the orders to stdout (${error.message}). Redirected to a file, stdout may end in a line cut short, which a resumed run would append to: write with --out FILE instead, whose last line a resumed run cuts back first.`, EXIT.failed));
    io.stdout.on('error', onStdoutError);
    // stdout outlives the run (main() called again in one process): leave it as it was found.
    return { current: io.stdout, open: async () => io.stdout, close: async () => void io.stdout.off('error', onStdoutError) };
  }
  const named = (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' ? error : new ExitError(`Cannot write --out ${file} (${error.message}).${PATH_ERRORS.has(error.code ?? '') ? ' Check the path: its directory must exist and be writable.' : ''}`, EXIT.failed));
  let stream: Writable | undefined;
  let opening: Promise<Writable> | undefined;
  /** Where a whole-file run writes until it completes; undefined when it writes --out itself. */
  let temporary: string | undefined;
  /** The file --out names, through its links: what a whole-file run renames its temporary over. */
  let real = file;
  let abandoned = false;
  const open = () => (opening ??= (async () => {
    try {
      // Through the path as given: the links to a pipe (/dev/stdout, bash's >(gzip)) end in 'pipe:[…]', no path.
      const stats = await stat(file).catch(() => undefined);
      const fifo = stats?.isFIFO() === true;
      // A regular file only: a FIFO has no last line to cut, and opening it to look would end its waiting reader's input.
      if (append && stats?.isFile()) await cutTornLine(file);
      real = await resolveLinks(file);
      // Whole only over a regular file (or none yet): renamed over /dev/full or a FIFO, it would replace them.
      if (mode.whole && !append && (stats === undefined || stats.isFile())) {
        await removeStaleTemporaries(real);
        temporary = `${real}.${process.pid}.tmp`;
        await rm(temporary, { force: true }); // one of an earlier process with this pid; then created anew, never through a link
      }
      const path = temporary ?? file;
      // The export holds customers' names and addresses: a file that replaces one is private until it has its mode and owner.
      const replacing = temporary !== undefined && stats !== undefined;
      const fd = fifo ? await openFifo(path, append, io.signal) : await openFile(path, append ? 'a' : temporary !== undefined ? 'wx' : 'w', replacing ? 0o600 : 0o666);
      if (replacing) await keepModeAndOwner(temporary!, stats!);
      // A FIFO is written as stdout's pipe is, without blocking: a file stream's write to one whose reader reads nothing
      // holds a thread of libuv's pool, which Ctrl-C's exit waits for, for as long as the reader lets it.
      const opened = fifo ? new Socket({ fd, readable: false, writable: true }) : createWriteStream(path, { fd });
      // Once abandoned, the writes it still held fail (ERR_STREAM_DESTROYED): no fault of the output's.
      stream = opened.on('error', (error: NodeJS.ErrnoException) => abandoned || onError(named(error)));
      return stream;
    } catch (error) {
      if (error === io.signal?.reason) throw error; // Ctrl-C while waiting for a reader: an interruption, not a write failure
      throw named(error as NodeJS.ErrnoException);
    }
  })());
  const end = () => new Promise<void>((resolve, reject) => (stream ? stream.end((error?: Error | null) => (error ? reject(named(error)) : resolve())) : resolve()));
  return {
    get current() {
      return stream;
    },
    open,
    async close(complete, abandon = false) {
      if (abandon && temporary === undefined) {
        abandoned = true;
        return void stream?.destroy();
      }
      if (temporary === undefined) return end();
      try {
        if (complete) await syncToDisk(stream!);
        await end();
        if (complete) await rename(temporary, real);
      } catch (error) {
        throw named(error as NodeJS.ErrnoException);
      } finally {
        await rm(temporary, { force: true }).catch(() => {});
      }
    },
  };
}

/** Gives `path` the mode of `like` (and its owner, when running as root, who alone may). */
async function keepModeAndOwner(path: string, like: import('node:fs').Stats): Promise<void> {
  await chmod(path, like.mode & 0o7777);
  if (process.getuid?.() === 0) await chown(path, like.uid, like.gid);
}

/** How long a temporary must have been left untouched before it counts as a killed run's. */
const STALE_AFTER_MS = 24 * 60 * 60 * 1000;

/**
 * What a run killed before it could clean up (SIGKILL, a power loss) left beside the file: a name this code writes,
 * untouched for a day, its pid gone here. The day is what tells: a run in another container or on another host sharing
 * the directory has a pid this process cannot see, but writes its temporary as it goes.
 */
async function removeStaleTemporaries(real: string): Promise<void> {
  const prefix = `${basename(real)}.`;
  const names = await readdir(dirname(real)).catch(() => [] as string[]);
  for (const name of names) {
    const pid = name.startsWith(prefix) && name.endsWith('.tmp') ? name.slice(prefix.length, -'.tmp'.length) : '';
    if (!/^[1-9]\d{0,9}$/.test(pid) || Number(pid) === process.pid || isRunning(Number(pid))) continue;
    const path = join(dirname(real), name);
    const stats = await stat(path).catch(() => undefined);
    if (stats?.isFile() && Date.now() - stats.mtimeMs > STALE_AFTER_MS) await rm(path, { force: true }).catch(() => {});
  }
}

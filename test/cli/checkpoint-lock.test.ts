import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { access, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockCheckpointFile } from '../../src/cli/checkpoint-lock.js';
import { ExitError } from '../../src/cli/io.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'paywidget-lock-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const exists = (path: string) => access(path).then(() => true, () => false);

/** The pid of a process that has already exited. */
function deadPid(): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = execFile(process.execPath, ['-e', '0'], (error) => (error ? reject(error) : resolve(child.pid!)));
  });
}

async function refusal(file: string): Promise<ExitError> {
  const error = await lockCheckpointFile(file).then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(ExitError);
  return error as ExitError;
}

describe('lockCheckpointFile', () => {
  it('lets one run hold a checkpoint; another is refused with exit code 75 until it is released', async () => {
    const file = join(dir, 'one.json');
    const release = await lockCheckpointFile(file);
    const owner = JSON.parse(await readFile(`${file}.lock`, 'utf8')) as { pid: number; host: string };
    expect(owner).toMatchObject({ pid: process.pid, host: hostname() });

    const error = await refusal(file);
    expect(error.exitCode).toBe(75);
    expect(error.message).toContain(`another 'paywidget orders sync' is using the checkpoint ${file} (pid ${process.pid} on ${hostname()}`);
    expect(error.message).toContain(`delete ${file}.lock`);

    await release();
    expect(await exists(`${file}.lock`)).toBe(false);
    await (await lockCheckpointFile(file))();
  });

  it('takes over the lock of a run that died on this host', async () => {
    const file = join(dir, 'dead.json');
    const pid = await deadPid();
    await writeFile(`${file}.lock`, JSON.stringify({ pid, host: hostname(), startedAt: '2026-01-01T00:00:00.000Z' }));
    const release = await lockCheckpointFile(file);
    expect(JSON.parse(await readFile(`${file}.lock`, 'utf8'))).toMatchObject({ pid: process.pid });
    await release();
  });

  it('lets exactly one of several runs that found the same dead lock take it over', async () => {
    const pid = await deadPid();
    // The race is between a check and a removal: it showed in about a third of such trials before the guard.
    for (let trial = 0; trial < 100; trial++) {
      const file = join(dir, `race-${trial}.json`);
      await writeFile(`${file}.lock`, JSON.stringify({ pid, host: hostname(), startedAt: '2026-01-01T00:00:00.000Z' }));
      const runs = await Promise.allSettled(Array.from({ length: 4 }, () => lockCheckpointFile(file)));
      const winners = runs.flatMap((run) => (run.status === 'fulfilled' ? [run.value] : []));
      expect([trial, winners.length]).toEqual([trial, 1]);
      for (const run of runs) if (run.status === 'rejected') expect((run.reason as ExitError).exitCode).toBe(75);
      expect(await exists(`${file}.lock.takeover`)).toBe(false);
      await winners[0]!();
      expect(await exists(`${file}.lock`)).toBe(false);
    }
  });

  it('lets exactly one of several runs take over an old empty lock: a lock being made is never seen empty', async () => {
    // A lock used to be created empty and written a moment later: a run that read the old empty lock
    // could then remove a new one still empty, and two runs synced (seen in up to 3 of 20 trials).
    const old = new Date(Date.now() - 60_000);
    for (let trial = 0; trial < 100; trial++) {
      const file = join(dir, `empty-race-${trial}.json`);
      await writeFile(`${file}.lock`, '');
      await utimes(`${file}.lock`, old, old);
      const runs = await Promise.allSettled(Array.from({ length: 4 }, () => lockCheckpointFile(file)));
      const winners = runs.flatMap((run) => (run.status === 'fulfilled' ? [run.value] : []));
      expect([trial, winners.length]).toEqual([trial, 1]);
      await winners[0]!();
    }
    // No draft is left behind.
    expect((await readdir(dir)).filter((name) => name.startsWith('empty-race-'))).toEqual([]);
  });

  it('takes over a lock naming this very pid that this process does not hold (a restarted container is pid 1 again)', async () => {
    const file = join(dir, 'same-pid.json');
    await writeFile(`${file}.lock`, JSON.stringify({ pid: process.pid, host: hostname(), startedAt: new Date().toISOString(), token: 'the crashed run' }));
    const release = await lockCheckpointFile(file);
    expect(JSON.parse(await readFile(`${file}.lock`, 'utf8'))).toMatchObject({ pid: process.pid });
    expect(await readFile(`${file}.lock`, 'utf8')).not.toContain('the crashed run');
    await release();
  });

  it('takes over a lock written before this machine booted, even if its pid is in use again', async () => {
    const file = join(dir, 'before-boot.json');
    // A live process (our parent), under a lock from long before the last boot.
    await writeFile(`${file}.lock`, JSON.stringify({ pid: process.ppid, host: hostname(), startedAt: '2000-01-01T00:00:00.000Z', token: 't' }));
    const release = await lockCheckpointFile(file);
    expect(JSON.parse(await readFile(`${file}.lock`, 'utf8'))).toMatchObject({ pid: process.pid });
    await release();
    // The same live pid with a lock from now is a run in progress.
    await writeFile(`${file}.lock`, JSON.stringify({ pid: process.ppid, host: hostname(), startedAt: new Date().toISOString(), token: 't' }));
    expect((await refusal(file)).exitCode).toBe(75);
  });

  it('takes over a lock whose pid another process took since (a pid reused), and says no heartbeat wait for a lock of this host', async () => {
    const file = join(dir, 'reused-pid.json');
    const lockedAt = new Date(Date.now() - 120_000).toISOString(); // past the minute's margin for a step of the clock
    // A process started after the lock was written: the run that wrote it is gone, and its pid in use again.
    const stranger = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      await once(stranger, 'spawn');
      await writeFile(`${file}.lock`, JSON.stringify({ pid: stranger.pid, host: hostname(), startedAt: lockedAt, token: 't', heartbeatMs: 10_000 }));
      const release = await lockCheckpointFile(file);
      expect(JSON.parse(await readFile(`${file}.lock`, 'utf8'))).toMatchObject({ pid: process.pid });
      await release();
    } finally {
      stranger.kill();
    }
    // A live process that started before its lock is the run holding it: refused, without the heartbeat sentence.
    await writeFile(`${file}.lock`, JSON.stringify({ pid: process.ppid, host: hostname(), startedAt: new Date().toISOString(), token: 't', heartbeatMs: 10_000 }));
    const refused = await refusal(file);
    expect(refused.exitCode).toBe(75);
    expect(refused.message).not.toContain('taken over after');
  });

  it("releases only its own lock: one that was taken over meanwhile stays", async () => {
    const file = join(dir, 'taken.json');
    const release = await lockCheckpointFile(file);
    const other = JSON.stringify({ pid: process.pid, host: hostname(), startedAt: '2026-01-01T00:00:00.000Z', token: 'another run' });
    await writeFile(`${file}.lock`, other);
    await release();
    expect(await readFile(`${file}.lock`, 'utf8')).toBe(other);
  });

  it('clears a takeover guard left by a run that died taking over, once it is old', async () => {
    const file = join(dir, 'guard.json');
    await writeFile(`${file}.lock`, JSON.stringify({ pid: await deadPid(), host: hostname(), startedAt: '2026-01-01T00:00:00.000Z' }));
    await writeFile(`${file}.lock.takeover`, '');
    expect((await refusal(file)).exitCode).toBe(75); // fresh: another run may be taking over right now
    const minuteAgo = new Date(Date.now() - 60_000);
    await utimes(`${file}.lock.takeover`, minuteAgo, minuteAgo);
    const release = await lockCheckpointFile(file);
    expect(JSON.parse(await readFile(`${file}.lock`, 'utf8'))).toMatchObject({ pid: process.pid });
    await release();
  });

  it('takes over an empty or cut-short lock once it is too old to be one being written now', async () => {
    for (const [name, text] of [['empty.json', ''], ['torn.json', '{"pid":12']] as const) {
      const file = join(dir, name);
      await writeFile(`${file}.lock`, text);
      expect((await refusal(file)).exitCode).toBe(75); // fresh: its run may be writing its name right now
      const minuteAgo = new Date(Date.now() - 60_000);
      await utimes(`${file}.lock`, minuteAgo, minuteAgo);
      const release = await lockCheckpointFile(file);
      expect(JSON.parse(await readFile(`${file}.lock`, 'utf8'))).toMatchObject({ pid: process.pid });
      await release();
    }
  });

  it('takes over a lock from another host once its run has stopped touching it (a container restarted under a new hostname)', async () => {
    const file = join(dir, 'silent-host.json');
    const lock = JSON.stringify({ pid: process.ppid, host: 'old-container', startedAt: new Date().toISOString(), token: 't', heartbeatMs: 10_000 });
    await writeFile(`${file}.lock`, lock);
    const fresh = await refusal(file); // touched just now: its run may be syncing on the other host
    expect(fresh.exitCode).toBe(75);
    expect(fresh.message).toContain('A lock its run stops touching is taken over after 60 s.');
    const twoMinutesAgo = new Date(Date.now() - 120_000);
    await utimes(`${file}.lock`, twoMinutesAgo, twoMinutesAgo);
    const release = await lockCheckpointFile(file);
    expect(JSON.parse(await readFile(`${file}.lock`, 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() });
    await release();

    // On this host the pid decides: a run paused for minutes (Ctrl-Z, a debugger) that is still alive keeps its lock.
    const paused = join(dir, 'paused-here.json');
    await writeFile(`${paused}.lock`, JSON.stringify({ pid: process.ppid, host: hostname(), startedAt: new Date().toISOString(), token: 't', heartbeatMs: 10_000 }));
    await utimes(`${paused}.lock`, twoMinutesAgo, twoMinutesAgo);
    expect((await refusal(paused)).exitCode).toBe(75);
  });

  it('touches its lock while it holds it, and stops when released', async () => {
    const file = join(dir, 'heartbeat.json');
    const release = await lockCheckpointFile(file, 20);
    const longAgo = new Date(Date.now() - 600_000);
    await utimes(`${file}.lock`, longAgo, longAgo);
    // Touched again within a few beats (polled: a loaded machine may fire the timer late).
    const age = async () => Date.now() - (await stat(`${file}.lock`)).mtimeMs;
    for (let waited = 0; (await age()) > 60_000 && waited < 5_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await age()).toBeLessThan(60_000);
    expect((await refusal(file)).exitCode).toBe(75);
    await release();
    expect(await exists(`${file}.lock`)).toBe(false);
    // A later run's lock in the same place is no longer touched by the released one.
    await writeFile(`${file}.lock`, '');
    await utimes(`${file}.lock`, longAgo, longAgo);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(Date.now() - (await stat(`${file}.lock`)).mtimeMs).toBeGreaterThan(500_000);
    await rm(`${file}.lock`);
  });

  it('does not take over a lock from another host, or a fresh one it cannot read: it says which file to delete', async () => {
    const other = join(dir, 'other-host.json');
    await writeFile(`${other}.lock`, JSON.stringify({ pid: await deadPid(), host: 'some-other-host', startedAt: '2026-01-01T00:00:00.000Z' }));
    expect((await refusal(other)).message).toMatch(/on some-other-host, started 2026-01-01T00:00:00\.000Z\)\. Let it finish, or if it is no longer running, delete .*other-host\.json\.lock\./);

    const garbled = join(dir, 'garbled.json');
    await writeFile(`${garbled}.lock`, 'not json');
    expect((await refusal(garbled)).message).toContain('(a run whose lock file cannot be read)');
    expect(await readFile(`${garbled}.lock`, 'utf8')).toBe('not json');
  });
});

describe('lockCheckpointFile on a filesystem without hard links (FAT, exFAT, some SMB and FUSE mounts)', () => {
  // link(2) answers EPERM there; the lock is then created exclusively instead, and still refuses a second run.
  const noLinks = async () => {
    throw Object.assign(new Error('EPERM: operation not permitted, link'), { code: 'EPERM' });
  };

  it('locks, refuses a second run, and releases', async () => {
    const file = join(dir, 'fat.checkpoint.json');
    const release = await lockCheckpointFile(file, undefined, noLinks);
    expect(JSON.parse(await readFile(`${file}.lock`, 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() });
    const second = await lockCheckpointFile(file, undefined, noLinks).then(() => undefined, (e: unknown) => e);
    expect(second).toMatchObject({ exitCode: 75, message: expect.stringContaining(`another 'paywidget orders sync' is using the checkpoint ${file} (pid ${process.pid}`) });
    await release();
    expect(await exists(`${file}.lock`)).toBe(false);
    expect((await readdir(dir)).filter((name) => name.startsWith('fat.checkpoint.json.lock'))).toEqual([]);
  });

  it('names the checkpoint and its directory when the lock cannot be placed for another reason', async () => {
    const file = join(dir, 'io.checkpoint.json');
    const failing = async () => {
      throw Object.assign(new Error('EIO: i/o error, link'), { code: 'EIO' });
    };
    const error = await lockCheckpointFile(file, undefined, failing).then(() => undefined, (e: unknown) => e);
    expect(error).toMatchObject({ exitCode: 1, message: `The checkpoint file ${file} cannot be locked (EIO): paywidget writes ${file}.lock beside it. Check --checkpoint: its directory must exist and be writable.` });
    expect((await readdir(dir)).filter((name) => name.startsWith('io.checkpoint.json'))).toEqual([]);
  });
});

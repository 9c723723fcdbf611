import { PayError } from '../errors.js';
import type { CheckpointStore } from '../stores/checkpoint-store.js';
import type { Logger } from '../types.js';

/** How long a run holds its checkpoint without renewing: a run that died frees it after this. */
export const SYNC_LOCK_MS = 30_000;

export interface SyncLock {
  /** Renews the hold before a save; throws SYNC_IN_PROGRESS when another run took the checkpoint after the hold ran out. */
  confirm(): Promise<void>;
  /** Best effort: a hold that cannot be freed runs out with its time. */
  release(): Promise<void>;
}

/** The SYNC_IN_PROGRESS of a run whose hold another run took: seen at a renewal, or by the position changing under it. */
export const lostHold = (checkpoint: string): PayError => syncInProgress(checkpoint, `This orders.sync run lost its hold on checkpoint '${checkpoint}' to another run (it was not renewed for ${SYNC_LOCK_MS / 1000} s: the event loop was blocked, or the store unreachable); it stopped without saving over that run's position. Let that run finish, then run this one again.`);
const UNLOCKED: SyncLock = { confirm: async () => {}, release: async () => {} };

/**
 * Makes `checkpoint` this run's, when the store can lock (the in-memory and Redis stores can): two
 * overlapping runs (a cron job that outlasts its interval, two instances on one schedule) would each
 * deliver every order and race to save the position. The hold is renewed on a timer and before each
 * save, so a page whose onOrder takes long keeps it.
 */
export async function lockCheckpoint(store: CheckpointStore, checkpoint: string, logger: Logger): Promise<SyncLock> {
  const { acquireLock, renewLock, releaseLock } = store;
  if (!acquireLock || !renewLock || !releaseLock) return UNLOCKED;
  const token = await acquireLock.call(store, checkpoint, SYNC_LOCK_MS);
  if (token === undefined) {
    throw syncInProgress(checkpoint, `Checkpoint '${checkpoint}' is in use by another orders.sync run (in this process, or in another one sharing the checkpoint store). Let it finish, or use another checkpoint name; the hold of a run that died ends within ${SYNC_LOCK_MS / 1000} s.`);
  }
  let lost = false;
  const renew = async () => {
    if (!(await renewLock.call(store, checkpoint, token, SYNC_LOCK_MS))) lost = true;
  };
  const timer = setInterval(() => {
    if (!lost) renew().catch((error: unknown) => logger.warn({ err: error, checkpoint }, 'could not renew the order sync lock; retrying'));
  }, SYNC_LOCK_MS / 3);
  (timer as { unref?: () => void }).unref?.();
  return {
    async confirm() {
      if (!lost) await renew();
      if (lost) throw lostHold(checkpoint);
    },
    async release() {
      clearInterval(timer);
      await releaseLock.call(store, checkpoint, token).catch((error: unknown) => logger.warn({ err: error, checkpoint }, 'could not release the order sync lock; it runs out on its own'));
    },
  };
}

function syncInProgress(checkpoint: string, message: string): PayError {
  return new PayError('SYNC_IN_PROGRESS', message, { details: { checkpoint } });
}

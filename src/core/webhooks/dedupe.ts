import { loggedWhereItArose, PayError } from '../errors.js';
import { isPending, type Awaitable } from '../awaitable.js';
import type { ClaimResult, ClaimStore } from '../stores/claim-store.js';
import type { Logger } from '../types.js';
import type { BackgroundWrites } from './background-writes.js';
import type { LeaseRenewer } from './lease-renewer.js';

export interface DedupeDeps {
  store: ClaimStore;
  logger: Logger;
  leaseMs: number;
  /** How long a processed event id is remembered. */
  retentionMs: number;
  /** How long a signature is remembered by the replay guard. */
  signatureRetentionMs: number;
  /** Renews the claims of running handlers. */
  renewer: LeaseRenewer;
  /** Where a failed done mark or release is retried, for `pay.drain()` to wait on. */
  background: BackgroundWrites;
}

/** processed: the work ran now; duplicate: it ran before; in_progress: another attempt is running it. */
export type DedupeOutcome = 'processed' | 'duplicate' | 'in_progress';

/**
 * Runs `work` at most once per event id, and, given the delivery's `signature`, refuses one seen before under
 * another event id.
 *
 * X-Pay-Event-Id is not signed, so a captured delivery could come back with a fresh one. When the payload
 * carries the event id, verify refused that already, and no signature is passed. Otherwise the replay
 * guard binds each signature to the first event id it arrives with (`sig:<signature>`), for as long
 * as its timestamp can pass the tolerance check, and never gives the binding back: not when the work
 * fails, not while it runs. The same bytes under their own event id are a retry or a duplicate; under
 * another, a replay (WEBHOOK_REPLAYED), even while the original is still running.
 *
 * Deduplication claims `evt:<event id>` under a lease: done → a duplicate; held → another attempt is
 * running it (409, retry later); claimed → the work runs, its lease renewed while it does, and the claim
 * is completed when it succeeds and released when it fails, so the sender's retry runs it again.
 * A store that fails to bind or claim throws STORE_UNAVAILABLE; nothing is marked done that did not run.
 */
export async function processOnce(deps: DedupeDeps, eventId: string, signature: string | undefined, work: () => Awaitable<void>): Promise<DedupeOutcome> {
  const { store, leaseMs, renewer } = deps;
  const eventKey = `evt:${eventId}`;
  const claimedAt = performance.now();
  // A store that answers at once (the memory store) is not waited for: each await is a turn of the event loop.
  if (signature !== undefined) {
    let bound: string | undefined;
    try {
      const answer = store.bind(`sig:${signature}`, eventId, deps.signatureRetentionMs);
      bound = isPending(answer) ? await answer : answer;
    } catch (error) {
      throw storeUnavailable(deps, eventId, error);
    }
    if (bound !== undefined && bound !== eventId) throw replayed(deps, eventId);
  }
  let evt: ClaimResult;
  try {
    const answer = store.claim(eventKey, leaseMs);
    evt = isPending(answer) ? await answer : answer;
  } catch (error) {
    throw storeUnavailable(deps, eventId, error);
  }
  if (evt.state !== 'claimed') return evt.state === 'done' ? 'duplicate' : 'in_progress';

  /** When the last renewal that held the claim was sent, if the work ran long enough to be renewed. */
  let renewedAt: number | undefined;
  try {
    const running = work();
    // Only a handler still running needs its lease renewed: one that finished at once held it throughout.
    if (isPending(running)) {
      renewer.hold(eventKey, evt.token);
      try {
        await running;
      } finally {
        renewedAt = renewer.drop(evt.token);
      }
    }
  } catch (error) {
    await release(deps, eventKey, evt.token, leaseEnds(deps, claimedAt, renewedAt));
    throw error;
  }
  const completed = complete(deps, eventKey, evt.token, leaseEnds(deps, claimedAt, renewedAt));
  if (isPending(completed)) await completed;
  return 'processed';
}

/**
 * Until when the claim is surely ours (real time, like a Redis lease): a lease from when the claim, or the last
 * renewal that held it, was sent. A failed complete or release is retried until then.
 */
function leaseEnds({ leaseMs }: DedupeDeps, claimedAt: number, renewedAt: number | undefined): number {
  return Math.max(claimedAt, renewedAt ?? claimedAt) + leaseMs;
}

/** A bind or claim that failed: STORE_UNAVAILABLE (503), so the sender retries. */
function storeUnavailable(deps: DedupeDeps, eventId: string, error: unknown): PayError {
  deps.logger.error({ err: error, eventId }, 'webhook claim store failed');
  return loggedWhereItArose(new PayError('STORE_UNAVAILABLE', 'The webhook claim store is unavailable, so the delivery cannot be deduplicated safely; the sender will retry it. Check the store (e.g. Redis): its connection, or the error logged with this one, which names a key it refused.', { cause: error }));
}

function replayed(deps: DedupeDeps, eventId: string): PayError {
  deps.logger.warn({ eventId }, 'webhook refused: its signature was already used by another event id (replay)');
  return new PayError('WEBHOOK_REPLAYED', 'This webhook signature was already used by a delivery with another event id: the delivery is a replay and was refused. Genuine retries keep their X-Pay-Event-Id.', { details: { eventId } });
}

/**
 * After the work ran, a failing store must not turn a processed delivery into a retry: log and go on.
 * The completion is retried in the background while the lease lasts, so a short store outage does not
 * leave the event claimed but not done (a later duplicate would then run it again once the lease ran out).
 */
function complete(deps: DedupeDeps, key: string, token: string, leaseEnds: number): Awaitable<void> {
  let held: Awaitable<boolean>;
  try {
    held = deps.store.complete(key, token, deps.retentionMs);
  } catch (error) {
    return completionFailed(deps, key, token, leaseEnds, error);
  }
  if (!isPending(held)) return completionLanded(deps, key, held);
  return held.then((answer) => completionLanded(deps, key, answer), (error: unknown) => completionFailed(deps, key, token, leaseEnds, error));
}

function completionLanded(deps: DedupeDeps, key: string, held: boolean): void {
  // Marked done all the same: a duplicate that took the claim meanwhile will not run it again after this.
  // A client that sends a command again after a reconnect (ioredis' default) can find its own first completion here too.
  if (!held) deps.logger.warn({ key }, 'webhook claim lease ran out before completion, and another delivery of the event took it; if your claim store cannot renew claims, raise webhooks.leaseMs above your slowest handler. (Or the store ran this completion twice: a Redis client that resends commands after a reconnect; then nothing is wrong.)');
}

function completionFailed(deps: DedupeDeps, key: string, token: string, leaseEnds: number, error: unknown): void {
  // A warning: retried, it usually lands; the error is for when it never does (below).
  deps.logger.warn({ err: error, key }, 'webhook claim store failed to complete a claim; retrying while its lease lasts');
  retryInBackground(deps, key, 'complete', async () => deps.store.complete(key, token, deps.retentionMs), leaseEnds);
}

/** Best effort, retried in the background while the lease lasts: a claim that cannot be released expires with its lease. */
async function release(deps: DedupeDeps, key: string, token: string, leaseEnds: number): Promise<void> {
  const attempt = async () => deps.store.release(key, token);
  try {
    await attempt();
  } catch (error) {
    deps.logger.warn({ err: error, key }, 'webhook claim store failed to release a claim; retrying while its lease lasts');
    retryInBackground(deps, key, 'release', attempt, leaseEnds);
  }
}

/** How long before the lease ends the last background attempt goes out, to land while the claim is still held. */
const LAST_ATTEMPT_MARGIN_MS = 100;

/**
 * Repeats `attempt` (a compare-and-set on our own token, so harmless if it already happened) with
 * back-off until it succeeds or the lease ends, an attempt that hangs included. `pay.drain()` waits for it.
 */
function retryInBackground(deps: DedupeDeps, key: string, what: 'complete' | 'release', attempt: () => Promise<boolean>, leaseEnds: number): void {
  // A completion that never landed lets a duplicate run the handlers again once the lease ends: an error. A release
  // that never landed only holds the sender's retry off (409) until then.
  const givenUp = () => deps.logger[what === 'complete' ? 'error' : 'warn']({ key }, `webhook claim could not ${what} before its lease ended; it expires with the lease${what === 'complete' ? ', and a duplicate delivery after that runs the handlers again' : ''}`);
  deps.background.start(async (wait) => {
    for (let delayMs = 100; ; delayMs = Math.min(delayMs * 2, 2_000)) {
      // The last attempt goes out just before the lease ends, however long the back-off had grown: a store back by then is not missed.
      const left = leaseEnds - LAST_ATTEMPT_MARGIN_MS - performance.now();
      if (left <= 0) return givenUp();
      await wait(Math.min(delayMs, left));
      const outcome = attempt().then((held) => ({ held }), () => undefined);
      if (await wait(leaseEnds - performance.now(), outcome)) return givenUp();
      const answered = await outcome;
      if (answered === undefined) continue; // the store is still down: wait longer
      deps.logger.info({ key }, answered.held
        ? `webhook claim ${what} succeeded on retry`
        // The attempt that failed may have landed with only its reply lost.
        : `webhook claim was no longer ours on retry: the earlier ${what} landed without its reply, or the lease ran out`);
      return;
    }
  });
}

import { PayError } from '../errors.js';
import type { ClaimResult, ClaimStore } from '../stores/claim-store.js';
import type { Logger } from '../types.js';

export interface DedupeDeps {
  store: ClaimStore;
  logger: Logger;
  leaseMs: number;
  /** How long a processed event id is remembered. */
  retentionMs: number;
  /** How long a signature is remembered by the replay guard. */
  signatureRetentionMs: number;
}

/** processed: the work ran now; duplicate: it ran before; in_progress: another attempt is running it. */
export type DedupeOutcome = 'processed' | 'duplicate' | 'in_progress';

/**
 * Runs `work` at most once per event id, and refuses a signature seen before under another event id.
 *
 * Two claims: `sig:<signature>` (the replay guard: the event id is not signed, so a captured delivery
 * could come back with a fresh one) and `evt:<event id>` (deduplication). The signature is claimed
 * first, then the event id, so whoever holds an event id holds its own signature too; both are
 * completed when the work succeeds (event id first) and released when it fails.
 * - signature in progress: these very bytes are being processed (a concurrent duplicate, or a replay
 *   whose original is still running): 409, retry later.
 * - signature done: event id done → a duplicate; in progress → 409; new → a replay, refused
 *   (WEBHOOK_REPLAYED). A signature is only ever done after its own event id is.
 * - signature new: event id new → run the work; done → a duplicate, and the signature (a re-signed
 *   retry) is recorded as done so it cannot be replayed under another id later; in progress → 409,
 *   the signature given back (it may be the running attempt's own, claimed a moment later by it on
 *   another instance, so it must not be marked done here).
 * A store that fails to claim throws STORE_UNAVAILABLE; nothing is marked done that did not run.
 */
export async function processOnce(deps: DedupeDeps, eventId: string, signature: string, work: () => Promise<void>): Promise<DedupeOutcome> {
  const { store, leaseMs } = deps;
  const eventKey = `evt:${eventId}`;
  const signatureKey = `sig:${signature}`;
  // Until when the claims are ours (real time, like a Redis lease): a failed complete or release is retried until then.
  const leaseEnds = performance.now() + leaseMs;
  const unavailable = (cause: unknown) => {
    deps.logger.error({ err: cause, eventId }, 'webhook claim store failed');
    return new PayError('STORE_UNAVAILABLE', 'The webhook claim store is unavailable, so the delivery cannot be deduplicated safely; the sender will retry it. Check the store (e.g. Redis) connection.', { cause });
  };

  let sig: ClaimResult;
  try {
    sig = await store.claim(signatureKey, leaseMs);
  } catch (error) {
    throw unavailable(error);
  }
  if (sig.state === 'in_progress') return 'in_progress';
  let evt: ClaimResult;
  try {
    evt = await store.claim(eventKey, leaseMs);
  } catch (error) {
    await release(deps, signatureKey, sig, leaseEnds);
    throw unavailable(error);
  }

  if (evt.state !== 'claimed') {
    if (sig.state === 'claimed') {
      if (evt.state === 'done') await complete(deps, signatureKey, sig.token, deps.signatureRetentionMs, leaseEnds);
      else await release(deps, signatureKey, sig, leaseEnds);
    }
    return evt.state === 'done' ? 'duplicate' : 'in_progress';
  }
  if (sig.state !== 'claimed') {
    await release(deps, eventKey, evt, leaseEnds);
    deps.logger.warn({ eventId }, 'webhook refused: its signature was already used by another event id (replay)');
    throw new PayError('WEBHOOK_REPLAYED', 'This webhook signature was already used by a delivery with another event id: the delivery is a replay and was refused. Genuine retries keep their X-Pay-Event-Id.', { details: { eventId } });
  }

  try {
    await work();
  } catch (error) {
    await release(deps, eventKey, evt, leaseEnds);
    await release(deps, signatureKey, sig, leaseEnds);
    throw error;
  }
  await complete(deps, eventKey, evt.token, deps.retentionMs, leaseEnds);
  await complete(deps, signatureKey, sig.token, deps.signatureRetentionMs, leaseEnds);
  return 'processed';
}

/**
 * After the work ran, a failing store must not turn a processed delivery into a retry: log and go on.
 * The completion is retried in the background while the lease lasts, so a short store outage does not
 * leave the event claimed but not done (a later duplicate would then run it again once the lease ran out).
 */
async function complete(deps: DedupeDeps, key: string, token: string, retentionMs: number, leaseEnds: number): Promise<void> {
  try {
    await completeOnce(deps, key, token, retentionMs);
  } catch (error) {
    deps.logger.error({ err: error, key: logKey(key) }, 'webhook claim store failed to complete a claim; retrying while its lease lasts');
    retryInBackground(deps, key, 'complete', () => completeOnce(deps, key, token, retentionMs), leaseEnds);
  }
}

async function completeOnce(deps: DedupeDeps, key: string, token: string, retentionMs: number): Promise<void> {
  if (!(await deps.store.complete(key, token, retentionMs))) {
    deps.logger.warn({ key: logKey(key) }, 'webhook claim lease ran out before completion; raise webhooks.leaseMs above your slowest handler');
  }
}

/** Best effort, retried in the background while the lease lasts: a claim that cannot be released expires with its lease. */
async function release(deps: DedupeDeps, key: string, claim: ClaimResult, leaseEnds: number): Promise<void> {
  if (claim.state !== 'claimed') return;
  const attempt = async () => {
    await deps.store.release(key, claim.token);
  };
  try {
    await attempt();
  } catch (error) {
    deps.logger.error({ err: error, key: logKey(key) }, 'webhook claim store failed to release a claim; retrying while its lease lasts');
    retryInBackground(deps, key, 'release', attempt, leaseEnds);
  }
}

/**
 * Repeats `attempt` (a compare-and-set on our own token, so harmless if it already happened) with
 * back-off until it succeeds or the lease ends. The timers do not keep the process alive.
 */
function retryInBackground(deps: DedupeDeps, key: string, what: 'complete' | 'release', attempt: () => Promise<void>, leaseEnds: number, delayMs = 100): void {
  if (performance.now() + delayMs >= leaseEnds) {
    deps.logger.warn({ key: logKey(key) }, `webhook claim could not ${what} before its lease ended; it expires with the lease`);
    return;
  }
  setTimeout(() => {
    attempt().then(
      () => deps.logger.info({ key: logKey(key) }, `webhook claim ${what} succeeded on retry`),
      () => retryInBackground(deps, key, what, attempt, leaseEnds, Math.min(delayMs * 2, 2_000)),
    );
  }, delayMs).unref?.();
}

function logKey(key: string): string {
  return key.startsWith('sig:') ? 'sig:…' : key;
}

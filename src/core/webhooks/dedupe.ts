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
 * Two claims are taken together: `evt:<event id>` (deduplication) and `sig:<signature>` (the replay
 * guard: the event id is not signed, so a captured delivery could come back with a fresh one). Both are
 * completed when the work succeeds and both released when it fails, so they move as a pair:
 * - event id known (done / in progress): a duplicate, answered without running anything. A signature
 *   seen for the first time here (the sender re-signed its retry) is recorded as done, so it cannot be
 *   replayed under another id later.
 * - event id new, signature known: a replay, refused (WEBHOOK_REPLAYED).
 * - both new: run the work.
 * A store that fails to claim throws STORE_UNAVAILABLE; nothing is marked done that did not run.
 */
export async function processOnce(deps: DedupeDeps, eventId: string, signature: string, work: () => Promise<void>): Promise<DedupeOutcome> {
  const { store, leaseMs } = deps;
  const eventKey = `evt:${eventId}`;
  const signatureKey = `sig:${signature}`;
  const [signatureClaim, eventClaim] = await Promise.allSettled([store.claim(signatureKey, leaseMs), store.claim(eventKey, leaseMs)]);

  if (signatureClaim.status === 'rejected' || eventClaim.status === 'rejected') {
    if (signatureClaim.status === 'fulfilled') await release(deps, signatureKey, signatureClaim.value);
    if (eventClaim.status === 'fulfilled') await release(deps, eventKey, eventClaim.value);
    const cause = signatureClaim.status === 'rejected' ? signatureClaim.reason : (eventClaim as PromiseRejectedResult).reason;
    deps.logger.error({ err: cause, eventId }, 'webhook claim store failed');
    throw new PayError('STORE_UNAVAILABLE', 'The webhook claim store is unavailable, so the delivery cannot be deduplicated safely; the sender will retry it. Check the store (e.g. Redis) connection.', { cause });
  }
  const sig = signatureClaim.value;
  const evt = eventClaim.value;

  if (evt.state !== 'claimed') {
    if (sig.state === 'claimed') await complete(deps, signatureKey, sig.token, deps.signatureRetentionMs);
    return evt.state === 'done' ? 'duplicate' : 'in_progress';
  }
  if (sig.state !== 'claimed') {
    await release(deps, eventKey, evt);
    deps.logger.warn({ eventId }, 'webhook refused: its signature was already used by another event id (replay)');
    throw new PayError('WEBHOOK_REPLAYED', 'This webhook signature was already used by a delivery with another event id: the delivery is a replay and was refused. Genuine retries keep their X-Pay-Event-Id.', { details: { eventId } });
  }

  try {
    await work();
  } catch (error) {
    await release(deps, eventKey, evt);
    await release(deps, signatureKey, sig);
    throw error;
  }
  await complete(deps, eventKey, evt.token, deps.retentionMs);
  await complete(deps, signatureKey, sig.token, deps.signatureRetentionMs);
  return 'processed';
}

/** After the work ran, a failing store must not turn a processed delivery into a retry: log and go on. */
async function complete(deps: DedupeDeps, key: string, token: string, retentionMs: number): Promise<void> {
  try {
    if (!(await deps.store.complete(key, token, retentionMs))) {
      deps.logger.warn({ key: logKey(key) }, 'webhook claim lease ran out before completion; raise webhooks.leaseMs above your slowest handler');
    }
  } catch (error) {
    deps.logger.error({ err: error, key: logKey(key) }, 'webhook claim store failed to complete a claim; it will expire after its lease');
  }
}

/** Best effort: a claim that cannot be released expires with its lease. */
async function release(deps: DedupeDeps, key: string, claim: ClaimResult): Promise<void> {
  if (claim.state !== 'claimed') return;
  try {
    await deps.store.release(key, claim.token);
  } catch (error) {
    deps.logger.error({ err: error, key: logKey(key) }, 'webhook claim store failed to release a claim; it will expire after its lease');
  }
}

function logKey(key: string): string {
  return key.startsWith('sig:') ? 'sig:…' : key;
}

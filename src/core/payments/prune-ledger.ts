import { invalidInput } from '../errors.js';
import type { Logger } from '../types.js';
import type { Ledger } from './ledger.js';

/** Options of `pay.payments.pruneLedger()`. */
export interface PruneLedgerOptions {
  /**
   * Confirmed and failed payments last changed longer ago than this (ms) are removed. At least a day:
   * a recent confirmation is what keeps an order the platform does not show as paid yet from being
   * minted again. Keep them as long as the windows `reconcileOrders` looks at.
   */
  olderThanMs: number;
  /** Stops the pruning between entries; the report then says `complete: false`. */
  signal?: AbortSignal | undefined;
}

/** What one pruning removed. */
export interface PruneLedgerReport {
  /** Entries removed. */
  removed: number;
  /** False when `signal` stopped it early. */
  complete: boolean;
}

const MIN_LEDGER_RETENTION_MS = 86_400_000;
/** 36,500 days, as the CLI's --older-than: a longer one (keep for ever) would reach past the dates a Date holds. */
const MAX_LEDGER_RETENTION_MS = 36_500 * MIN_LEDGER_RETENTION_MS;
/** Entries removed at once: each removal is a round trip or two on Redis. */
const BATCH = 50;

/**
 * Retention for the ledger, which otherwise keeps every payment it heard of: removes the settled ones
 * (confirmed, failed) that have not changed for `olderThanMs`. Unresolved payments stay whatever their
 * age: they are the sweep's work, and money may still arrive.
 */
export async function pruneLedger(deps: { ledger: Ledger; now: () => number; logger: Logger }, options: PruneLedgerOptions): Promise<PruneLedgerReport> {
  const olderThanMs = (options as Partial<PruneLedgerOptions> | undefined)?.olderThanMs;
  if (typeof olderThanMs !== 'number' || !Number.isFinite(olderThanMs) || olderThanMs < MIN_LEDGER_RETENTION_MS || olderThanMs > MAX_LEDGER_RETENTION_MS) {
    throw invalidInput('olderThanMs', `pruneLedger({ olderThanMs }) takes milliseconds, at least ${MIN_LEDGER_RETENTION_MS} (a day): younger confirmations keep orders from being paid twice; and at most ${MAX_LEDGER_RETENTION_MS} (36,500 days): to keep every payment, do not prune (got ${String(olderThanMs)}).`);
  }
  const { ledger, logger } = deps;
  const updatedTo = deps.now() - olderThanMs;
  let removed = 0;
  const forget = async (ids: string[]) => {
    const results = await Promise.all(ids.map((id) => ledger.forget(id, { kind: 'settled', updatedTo })));
    removed += results.filter(Boolean).length;
  };
  // By last change, then by first seen: a Redis ledger written before the index by updatedAt existed (or by an
  // older instance during a rolling deploy) has its entries in the second only. Forgetting checks updatedAt
  // itself, so an entry first seen long ago but changed since stays; one the first walk removed is not met again.
  for (const outcome of ['failed', 'confirmed'] as const) {
    for (const query of [{ outcome, updatedTo }, { outcome, firstSeenTo: updatedTo }]) {
      let batch: string[] = [];
      for await (const entry of ledger.list(query)) {
        if (options.signal?.aborted) break;
        if (entry.updatedAt > updatedTo) continue; // changed since: kept, and no forget sent for it
        batch.push(entry.paymentId);
        if (batch.length === BATCH) {
          await forget(batch);
          batch = [];
        }
      }
      await forget(batch);
    }
  }
  const complete = options.signal?.aborted !== true;
  logger.info({ removed, complete, updatedTo: new Date(updatedTo).toISOString() }, 'payment ledger pruned');
  return { removed, complete };
}

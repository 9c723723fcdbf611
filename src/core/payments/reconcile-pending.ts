import { invalidInput, toPayError } from '../errors.js';
import type { LedgerEntry, LedgerSource } from '../stores/ledger-store.js';
import type { Logger } from '../types.js';
import type { Ledger } from './ledger.js';
import { checkBudgetMs, type LearnedHere, type ReconcileHow, type ReconcileOptions, type ReconcileResult } from './reconcile.js';

/** Options of `pay.payments.reconcilePending()`, the sweep of unresolved payments. */
export interface ReconcilePendingOptions {
  /** Only payments the ledger first heard of at least this long ago (ms); default 0, every one. */
  olderThanMs?: number | undefined;
  /** Payments polled at once (default 4). */
  concurrency?: number | undefined;
  /** Poll budget per payment (default 0: one poll each; the sweep is meant to run again later). */
  budgetMs?: number | undefined;
  /** Stops the sweep: no new payment is started; those in flight finish. */
  signal?: AbortSignal | undefined;
  /**
   * Told about each change as the sweep finds it (awaited), so that a sweep killed part-way has acted on
   * what it found so far: the ledger already holds those statuses, and no later sweep reports them again.
   * Throwing stops the sweep (those in flight finish and are told too); the call then rejects with the error.
   */
  onChange?: ((change: SweepChange) => unknown) | undefined;
}

/** A payment whose status moved between the sweep's listing and its poll. */
export interface SweepChange {
  /** The service's payment id. */
  paymentId: string;
  /** The merchant's order id, when the ledger knows it. */
  orderId?: string;
  /** The ledger's status when the sweep listed it (null: none was known). */
  from: string | null;
  /** The status now. */
  to: string | null;
  /** What the new status means: act on confirmed and failed (unless `source` is 'webhook'). */
  outcome: ReconcileResult['outcome'];
  /**
   * Who learned the new status: 'poll' (this sweep), or 'webhook' (a delivery that arrived while the
   * sweep ran, whose handlers already ran: do not act on it twice).
   */
  source: LedgerSource;
}

/** What one sweep found. */
export interface SweepReport {
  /** Unresolved payments looked at. */
  checked: number;
  /** Payments whose status changed since the listing, with the new outcome and who learned it. */
  changed: SweepChange[];
  /** Ids of payments still unresolved after their poll (left for the next sweep or a webhook). */
  unresolved: string[];
  /** Payments that could not be polled, e.g. an id the service does not know. */
  errors: Array<{ paymentId: string; code: string; message: string }>;
  /**
   * Ids the service does not know (404) of which nothing was ever learned, removed from the ledger so
   * that later sweeps stop asking: ids a page sent to `POST /payments/:id/reconcile` while the service
   * could not answer, made up or mistyped. They are also among `errors`, as PAYMENT_NOT_FOUND.
   */
  forgotten: string[];
  /**
   * Set when the payment service asked to wait (a 429 or 503 with Retry-After, in ms): the sweep then
   * started no further payment, and the ones not looked at wait for the next run, after that time.
   */
  retryAfterMs?: number;
  /**
   * True when every unresolved payment was looked at; false when `signal` or a Retry-After stopped the
   * sweep early, and the rest waits for the next run.
   */
  complete: boolean;
}

export interface SweepDeps {
  ledger: Ledger;
  reconcile: (paymentId: string, options: ReconcileOptions, learned: LearnedHere, how: ReconcileHow) => Promise<ReconcileResult>;
  now: () => number;
  logger: Logger;
}

/**
 * Polls every ledger entry that is not terminal, `concurrency` at a time, and reports what changed.
 * One payment failing (an id the service does not know, a refusal) is reported and does not stop the
 * others; a ledger store that fails does (STORE_UNAVAILABLE), and so does a service asking to wait.
 */
export async function reconcilePending(deps: SweepDeps, options: ReconcilePendingOptions = {}): Promise<SweepReport> {
  if (typeof options !== 'object' || options === null) throw invalidInput('options', `reconcilePending takes { olderThanMs?, concurrency?, budgetMs?, onChange?, signal? } or nothing (got ${options === null ? 'null' : typeof options}).`);
  const olderThanMs = options.olderThanMs ?? 0;
  const concurrency = options.concurrency ?? 4;
  if (!Number.isFinite(olderThanMs) || olderThanMs < 0) throw invalidInput('olderThanMs', `olderThanMs must be a number of milliseconds, 0 or more (got ${String(olderThanMs)}).`);
  if (!Number.isSafeInteger(concurrency) || concurrency < 1 || concurrency > 64) throw invalidInput('concurrency', `concurrency must be an integer from 1 to 64 (got ${String(concurrency)}).`);
  // Else every payment's poll would fail on it alone, and the sweep would report itself complete.
  const budgetMs = checkBudgetMs(options.budgetMs ?? 0);
  // Checked before any poll: failing on the first change would lose it (the ledger holds it, no later sweep reports it).
  if (options.onChange !== undefined && typeof options.onChange !== 'function') throw invalidInput('onChange', 'onChange must be a function (change) => unknown, called with each change the sweep finds.');

  const report: SweepReport = { checked: 0, changed: [], unresolved: [], errors: [], forgotten: [], complete: false };
  // Every one means every one: a cut-off at now would leave out those first seen before the clock stepped back.
  const entries = deps.ledger.list(olderThanMs > 0 ? { outcome: 'unresolved', firstSeenTo: deps.now() - olderThanMs } : { outcome: 'unresolved' })[Symbol.asyncIterator]();
  let storeFailure: unknown;
  let onChangeFailure: { error: unknown } | undefined;
  const tell = async (change: SweepChange) => {
    try {
      await options.onChange?.(change);
    } catch (error) {
      onChangeFailure ??= { error };
    }
  };
  const sweepOne = async (entry: LedgerEntry) => {
    report.checked += 1;
    try {
      const learned: LearnedHere = {};
      const result = await deps.reconcile(entry.paymentId, { budgetMs, signal: options.signal }, learned, { inSweep: true });
      // A status another poll learned (an overlapping sweep, the page's reconcile call) is that caller's to report,
      // also when a poll of this sweep moved the payment before it (processing → requires_action here, → succeeded there).
      if (result.status !== entry.status && (result.source === 'webhook' || (result.source === 'poll' && learned.status === result.status))) {
        const change: SweepChange = { paymentId: entry.paymentId, from: entry.status, to: result.status, outcome: result.outcome, source: result.source };
        if (result.orderId !== undefined) change.orderId = result.orderId;
        report.changed.push(change);
        await tell(change);
      }
      if (result.outcome === 'needs_reconciliation') report.unresolved.push(entry.paymentId);
      if (result.retryAfterMs !== undefined) report.retryAfterMs = Math.max(report.retryAfterMs ?? 0, result.retryAfterMs);
    } catch (error) {
      const payError = toPayError(error);
      if (payError.code === 'STORE_UNAVAILABLE') storeFailure ??= error;
      report.errors.push({ paymentId: entry.paymentId, code: payError.code, message: payError.message });
      if (payError.code === 'PAYMENT_NOT_FOUND' && entry.status === null) await forgetUnknown(entry.paymentId);
      else report.unresolved.push(entry.paymentId);
    }
  };
  // Only while no status is known: a webhook that recorded one meanwhile keeps the entry.
  const forgetUnknown = async (paymentId: string) => {
    try {
      if (await deps.ledger.forget(paymentId, { kind: 'unknown' })) report.forgotten.push(paymentId);
      else report.unresolved.push(paymentId);
    } catch (error) {
      storeFailure ??= error;
      report.unresolved.push(paymentId);
    }
  };
  /** No new payment is started once the caller stops the sweep, the service asks to wait, or a store or onChange fails. */
  const stopped = () => options.signal?.aborted || storeFailure !== undefined || onChangeFailure !== undefined || report.retryAfterMs !== undefined;
  let listed = false;
  /** Whether a worker took a payment from the listing after the sweep stopped, and left it unpolled. */
  let skipped = false;
  const worker = async () => {
    // Async generators queue concurrent next() calls, so the workers share one listing.
    while (!stopped()) {
      let next: IteratorResult<LedgerEntry>;
      try {
        next = await entries.next();
      } catch (error) {
        storeFailure ??= error;
        return;
      }
      if (next.done) {
        listed = true;
        return;
      }
      // Stopped while this worker waited for the listing: the payment it got is left for the next sweep.
      if (stopped()) {
        skipped = true;
        return;
      }
      await sweepOne(next.value);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  // Stopped after what may have been the last payment: one more look at the listing says whether any was left, so
  // that `complete` does not depend on whether another worker happened to reach the end.
  if (!listed && !skipped && storeFailure === undefined) {
    try {
      listed = (await entries.next()).done === true;
    } catch {
      // not known: not complete
    }
  }
  // Complete only when every payment listed was looked at: another worker may have reached the end meanwhile.
  report.complete = listed && !skipped;
  if (storeFailure !== undefined) throw toPayError(storeFailure);
  if (onChangeFailure !== undefined) throw onChangeFailure.error;
  if (report.retryAfterMs !== undefined) {
    deps.logger.warn({ checked: report.checked, retryAfterMs: report.retryAfterMs }, 'the payment service asked to wait (Retry-After); the sweep stopped early, the rest waits for its next run');
  }
  if (report.forgotten.length > 0) {
    deps.logger.warn({ forgotten: report.forgotten.length }, 'the payment service does not know some payment ids the ledger held without a status; they were removed from the ledger');
  }
  deps.logger.info({ checked: report.checked, changed: report.changed.length, unresolved: report.unresolved.length, errors: report.errors.length, forgotten: report.forgotten.length, complete: report.complete }, 'payment sweep finished');
  return report;
}

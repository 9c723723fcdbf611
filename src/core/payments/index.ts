import type { HttpPolicy, PaymentConfig } from '../config.js';
import type { LedgerEntry, LedgerStore } from '../stores/ledger-store.js';
import type { Logger } from '../types.js';
import type { WebhookHandler } from '../webhooks/dispatch.js';
import { createLedger, recordPoll, type Ledger, type LedgerInput } from './ledger.js';
import { defaultExtractPayment, isAboutAPayment } from './extract.js';
import type { PaymentsPolicy } from './options.js';
import { recheckPayment, reconcilePayment, type LearnedHere, type ReconcileHow, type ReconcileOptions, type ReconcileResult } from './reconcile.js';
import { pruneLedger, type PruneLedgerOptions, type PruneLedgerReport } from './prune-ledger.js';
import { reconcilePending, type ReconcilePendingOptions, type SweepReport } from './reconcile-pending.js';
import { checkPaymentId, fetchPaymentStatus, isPaymentId, type PaymentStatus, type StatusOptions } from './status.js';

/** `pay.payments`: the server side of "reconcile paymentId server-side or wait for the webhook". */
export interface Payments {
  /** One read of `GET /api/v1/payments/{id}/status` (client token when given, by `payments.statusAuth`); recorded in the ledger. */
  status(paymentId: string, options?: StatusOptions): Promise<PaymentStatus>;
  /** Polls to a terminal status within the budget; `needs_reconciliation` when it runs out (never throws for that). */
  reconcile(paymentId: string, options?: ReconcileOptions): Promise<ReconcileResult>;
  /** Polls every payment the ledger holds as unresolved, a few at a time, and reports what changed. */
  reconcilePending(options?: ReconcilePendingOptions): Promise<SweepReport>;
  /** What the ledger knows about a payment, without calling the service; undefined when nothing. */
  get(paymentId: string): Promise<LedgerEntry | undefined>;
  /**
   * What the ledger knows about the payments of an order, by the order id they were minted with: a
   * custom `resolveCheckout` checks it before minting again (the default resolver refuses an order with
   * a payment confirmed or still unresolved).
   */
  byOrder(orderId: string): Promise<LedgerEntry[]>;
  /**
   * Removes confirmed and failed payments that have not changed for `olderThanMs` (at least a day), so the
   * ledger does not grow without end: run it from a daily job. Unresolved payments stay.
   */
  pruneLedger(options: PruneLedgerOptions): Promise<PruneLedgerReport>;
}

export interface PaymentsDeps {
  policy: PaymentsPolicy;
  store: LedgerStore;
  payment: () => PaymentConfig;
  http: HttpPolicy;
  logger: Logger;
  now: () => number;
}

export interface PaymentsInternals extends Payments {
  readonly ledger: Ledger;
  /** `reconcile` with what the library's own callers add: the reconcile route lets a poll in flight finish. */
  reconcile(paymentId: string, options?: ReconcileOptions, learned?: LearnedHere, how?: ReconcileHow): Promise<ReconcileResult>;
  /** Feeds the ledger from a verified webhook; runs inside the delivery's claim, before the merchant's handlers. */
  readonly recordWebhook: WebhookHandler;
  /** A quick second look at a payment (recheckPayment): the mint guard's, for one the ledger holds as failed. */
  recheck(paymentId: string): Promise<LedgerEntry | undefined>;
}

export function createPayments(deps: PaymentsDeps): PaymentsInternals {
  const { policy, logger, http } = deps;
  const ledger = createLedger({ store: deps.store, classify: policy.classify, now: deps.now, logger });
  const statusContext = { payment: deps.payment, http, logger, statusAuth: policy.statusAuth, classify: policy.classify };

  const poll = (paymentId: string, options: StatusOptions, override?: Partial<HttpPolicy>) => fetchPaymentStatus(statusContext, paymentId, options, override);
  const reconcile = (paymentId: string, options?: ReconcileOptions, learned?: LearnedHere, how?: ReconcileHow) => reconcilePayment({
    ledger, poll, http, logger, pollBudgetMs: policy.pollBudgetMs, pollIntervalMs: policy.pollIntervalMs, pollMaxIntervalMs: policy.pollMaxIntervalMs,
  }, paymentId, options, learned, how);

  return {
    ledger,
    async status(paymentId, options) {
      const result = await poll(paymentId, options ?? {});
      await recordPoll(ledger, result);
      return result;
    },
    reconcile,
    reconcilePending: (options) => reconcilePending({ ledger, reconcile, now: deps.now, logger }, options),
    get: async (paymentId) => ledger.get(checkPaymentId(paymentId)),
    byOrder: (orderId) => ledger.byOrder(orderId),
    pruneLedger: (options) => pruneLedger({ ledger, now: deps.now, logger }, options),
    recheck: (paymentId) => recheckPayment({ ledger, poll, http, logger }, paymentId),
    recordWebhook(event) {
      const seen = policy.extractPayment(event.payload);
      if (seen === undefined || seen === null) {
        // A payment event the default extractor found no id or status in: the service's payloads may have changed
        // shape, and then no confirmation reaches the ledger, which is what stops an order being charged twice.
        if (policy.extractPayment === defaultExtractPayment && event.type !== undefined && isAboutAPayment(event.type)) {
          logger.warn({ eventId: event.id, type: event.type }, 'payment webhook names no payment id or status where the default extractor looks (payment_id or paymentId at the top, under data or data.object, or data.object.id; status there or in the type); not recorded in the ledger. If the payment service\'s payloads look otherwise, pass payments.extractPayment');
        }
        return;
      }
      const { paymentId, status, orderId, amount, currency } = seen;
      if (typeof paymentId !== 'string' || typeof status !== 'string' || status.trim() === '' || !isPaymentId(paymentId)) {
        // Retrying cannot fix a payload: say so once and let the delivery succeed.
        logger.warn({ eventId: event.id, type: event.type }, 'webhook names a payment the ledger cannot use (payment id or status missing or malformed); not recorded');
        return;
      }
      const input: LedgerInput = { paymentId, status, source: 'webhook' };
      if (typeof orderId === 'string' && orderId !== '') input.orderId = orderId;
      if (typeof amount === 'number' && Number.isSafeInteger(amount)) input.amount = amount;
      if (typeof currency === 'string' && /^[A-Za-z]{3}$/.test(currency)) input.currency = currency.toUpperCase();
      // Returned, not awaited: the memory ledger answers at once, and the event's handlers then run in the same turn.
      return ledger.record(input);
    },
  };
}

export type { PaymentStatus, StatusOptions } from './status.js';
export type { ReconcileOptions, ReconcileOutcome, ReconcileResult } from './reconcile.js';
export type { ReconcilePendingOptions, SweepChange, SweepReport } from './reconcile-pending.js';
export type { PruneLedgerOptions, PruneLedgerReport } from './prune-ledger.js';
export type { OrderFinding, OrderFindingKind, OrderReconciliationReport, ReconcileOrdersOptions } from './reconcile-orders.js';
export { DEFAULT_TERMINAL_STATUSES, resolvePaymentsOptions, type PaymentOutcome, type PaymentsOptions, type PaymentsPolicy, type StatusAuth } from './options.js';
export { defaultExtractPayment, type ExtractPayment, type PaymentObservation } from './extract.js';

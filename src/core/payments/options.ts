import { z } from 'zod';
import { configInvalid, parseSection, positiveMs } from '../config.js';
import { defaultExtractPayment, type ExtractPayment } from './extract.js';

/**
 * How `pay.payments` decides a payment's outcome. The payment document does not list status values: the
 * terminal sets are configurable, and an unknown status is never terminal, so a new status never fulfils or
 * cancels an order by itself.
 */
export interface PaymentsOptions {
  /**
   * Statuses that end a payment, compared without regard to case. Each list given replaces its
   * default (spread DEFAULT_TERMINAL_STATUSES to extend one).
   */
  terminalStatuses?: { confirmed?: readonly string[] | undefined; failed?: readonly string[] | undefined } | undefined;
  /**
   * The credential of `GET /api/v1/payments/{id}/status`. The document names only the payment_client_token,
   * which a server sweep of old payments does not have; the merchant credentials are the fallback:
   * `'client-token-or-merchant'` (default) sends the payment client token when the caller has it,
   * otherwise the merchant credentials; `'merchant'` always the merchant credentials; `'client-token'`
   * only the client token (a call without one is refused, so the sweep cannot poll).
   */
  statusAuth?: StatusAuth | undefined;
  /** How long `reconcile()` and `POST /payments/:paymentId/reconcile` poll before answering needs_reconciliation. Default 10 s. */
  pollBudgetMs?: number | undefined;
  /** First pause between polls (default 250 ms); it doubles up to pollMaxIntervalMs, with jitter. */
  pollIntervalMs?: number | undefined;
  /** The longest pause between two polls (default 4 s). */
  pollMaxIntervalMs?: number | undefined;
  /** Reads `{ paymentId, status, orderId?, amount?, currency? }` from a webhook payload, or undefined when it is about no payment. */
  extractPayment?: ExtractPayment | undefined;
}

/** Which credential reads a payment's status; see `PaymentsOptions.statusAuth`. */
export type StatusAuth = 'client-token-or-merchant' | 'merchant' | 'client-token';

/** The statuses that end a payment by default: the names payment services commonly use. */
export const DEFAULT_TERMINAL_STATUSES = Object.freeze({
  confirmed: Object.freeze(['succeeded', 'confirmed', 'paid', 'captured']),
  failed: Object.freeze(['failed', 'declined', 'canceled', 'cancelled', 'expired']),
});

/** What the library makes of a status: terminal either way, or not yet. */
export type PaymentOutcome = 'confirmed' | 'failed' | 'unresolved';

export interface PaymentsPolicy {
  classify(status: string | null | undefined): PaymentOutcome;
  statusAuth: StatusAuth;
  pollBudgetMs: number;
  pollIntervalMs: number;
  pollMaxIntervalMs: number;
  extractPayment: ExtractPayment;
}

const ms = z.custom<number>((v) => Number.isSafeInteger(v) && (v as number) >= 0, 'must be a whole number of milliseconds, 0 or more');
const statusList = z.array(z.string().trim().min(1, 'must not contain an empty status'));
const schema = z.object({
  terminalStatuses: z.strictObject({ confirmed: statusList.optional(), failed: statusList.optional() }).optional(),
  statusAuth: z.enum(['client-token-or-merchant', 'merchant', 'client-token']).default('client-token-or-merchant'),
  pollBudgetMs: ms.default(10_000),
  pollIntervalMs: positiveMs.default(250),
  pollMaxIntervalMs: positiveMs.default(4_000),
  extractPayment: z.custom<ExtractPayment>((v) => typeof v === 'function', 'must be a function (payload) => { paymentId, status } | undefined').optional(),
});

/** Validates `payments` options once, at creation; throws CONFIG_INVALID naming the option. */
export function resolvePaymentsOptions(options: PaymentsOptions = {}): PaymentsPolicy {
  const { terminalStatuses, statusAuth, pollBudgetMs, pollIntervalMs, pollMaxIntervalMs, extractPayment } = parseSection('payments', schema, options);
  const confirmed = new Set((terminalStatuses?.confirmed ?? DEFAULT_TERMINAL_STATUSES.confirmed).map((s) => s.toLowerCase()));
  const failed = new Set((terminalStatuses?.failed ?? DEFAULT_TERMINAL_STATUSES.failed).map((s) => s.toLowerCase()));
  const both = [...confirmed].filter((s) => failed.has(s));
  if (both.length > 0) {
    throw configInvalid('payments', [{ path: 'terminalStatuses', message: `names ${both.map((s) => `'${s}'`).join(', ')} both confirmed and failed` }]);
  }
  return {
    classify: (status) => {
      if (typeof status !== 'string') return 'unresolved';
      const s = status.toLowerCase(); // trimmed where statuses are read (the status answer, the ledger's record)
      return confirmed.has(s) ? 'confirmed' : failed.has(s) ? 'failed' : 'unresolved';
    },
    statusAuth,
    pollBudgetMs,
    pollIntervalMs,
    pollMaxIntervalMs: Math.max(pollIntervalMs, pollMaxIntervalMs),
    extractPayment: extractPayment ?? defaultExtractPayment,
  };
}

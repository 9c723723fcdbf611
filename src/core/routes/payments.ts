import { invalidInput, PayError } from '../errors.js';
import type { ReconcileOptions, ReconcileResult } from '../payments/reconcile.js';
import { checkClientToken, checkPaymentId } from '../payments/status.js';
import type { Route } from '../router.js';
import type { LedgerEntry } from '../stores/ledger-store.js';
import { jsonResponse as json } from '../json-response.js';
import { authorizedRequest, type JsonRouteDeps } from './hooks.js';

export interface ReconcileRouteDeps extends JsonRouteDeps {
  reconcile: (paymentId: string, options: ReconcileOptions) => Promise<ReconcileResult>;
}

export interface PaymentRouteDeps extends JsonRouteDeps {
  lookup: (paymentId: string) => Promise<LedgerEntry | undefined>;
}

/** The optional money facts, in the routes' snake_case. */
function facts(source: { orderId?: string | undefined; amount?: number | undefined; currency?: string | undefined }): Record<string, unknown> {
  return {
    ...(source.orderId === undefined ? {} : { order_id: source.orderId }),
    ...(source.amount === undefined ? {} : { amount: source.amount }),
    ...(source.currency === undefined ? {} : { currency: source.currency }),
  };
}

function clientTokenOf(body: unknown): string | undefined {
  const token = typeof body === 'object' && body !== null ? (body as { payment_client_token?: unknown }).payment_client_token : undefined;
  if (token === undefined || token === null || token === '') return undefined;
  if (typeof token !== 'string') throw invalidInput('payment_client_token', 'payment_client_token must be a string.');
  return checkClientToken(token.trim(), 'payment_client_token');
}

/**
 * `POST /payments/:paymentId/reconcile`: what a client calls after `onFailure` with
 * `needsReconciliation`. Body (optional): `{ "payment_client_token": "…" }`. Polls within the
 * configured budget and answers `200 { payment_id, status, outcome, source, order_id?, amount?, currency? }`;
 * `outcome` is confirmed, failed or needs_reconciliation. The token is used, never echoed.
 */
export function reconcileRoute(deps: ReconcileRouteDeps): Route {
  return {
    method: 'POST',
    path: '/payments/:paymentId/reconcile',
    maxBodyBytes: deps.maxBodyBytes,
    async handler(request, params) {
      const hookRequest = await authorizedRequest(deps, request);
      const paymentId = checkPaymentId(params.paymentId);
      // A page that went away stops the polling: nobody would read the answer (the ledger still gets what was learned).
      const result = await deps.reconcile(paymentId, { clientToken: clientTokenOf(hookRequest.body), signal: request.signal });
      const answer = json(200, { payment_id: result.paymentId, status: result.status, outcome: result.outcome, source: result.source, ...facts(result) });
      // The payment service is rate-limiting: the page should not call again sooner than it asked.
      if (result.retryAfterMs !== undefined) answer.headers['retry-after'] = String(Math.ceil(result.retryAfterMs / 1000));
      return answer;
    },
  };
}

/**
 * `GET /payments/:paymentId`: what the ledger knows, without calling the payment service.
 * `200 { payment_id, status, outcome, source, order_id?, amount?, currency?, first_seen_at, updated_at }`
 * (`outcome`: confirmed, failed or unresolved); 404 PAYMENT_NOT_FOUND when it knows nothing.
 */
export function paymentRoute(deps: PaymentRouteDeps): Route {
  return {
    method: 'GET',
    path: '/payments/:paymentId',
    maxBodyBytes: deps.maxBodyBytes,
    async handler(request, params) {
      await authorizedRequest(deps, request);
      const paymentId = checkPaymentId(params.paymentId);
      const entry = await deps.lookup(paymentId);
      if (!entry) {
        throw new PayError('PAYMENT_NOT_FOUND', `Nothing is recorded about payment ${paymentId} yet: no webhook or status poll has reported it. POST …/payments/${paymentId}/reconcile (under the path the library is mounted at) asks the payment service.`, { details: { paymentId, where: 'ledger' } });
      }
      return json(200, {
        payment_id: entry.paymentId,
        status: entry.status,
        outcome: entry.outcome,
        source: entry.status === null ? null : entry.source, // nothing was learned, by any means
        ...facts(entry),
        first_seen_at: new Date(entry.firstSeenAt).toISOString(),
        updated_at: new Date(entry.updatedAt).toISOString(),
      });
    },
  };
}

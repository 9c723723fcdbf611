import { isPending, type Awaitable } from '../awaitable.js';
import { loggedWhereItArose, PayError, toPayError } from '../errors.js';
import { jsonTextResponse } from '../json-response.js';
import { getHeader } from '../headers.js';
import type { Route } from '../router.js';
import type { Logger, PayRequest, PayResponse } from '../types.js';
import { processOnce, type DedupeDeps } from './dedupe.js';
import type { Dispatcher } from './dispatch.js';
import { bodyNotRawFor, WebhookHandlerError, WebhookVerificationError } from './errors.js';
import type { CheckedDelivery, VerifyInput } from './verify.js';

export interface WebhookRouteDeps {
  /** At once when it can (node:crypto): the hot path waits for nothing it need not. */
  verify: (input: VerifyInput) => Awaitable<CheckedDelivery>;
  dispatcher: Dispatcher;
  dedupe: DedupeDeps;
  logger: Logger;
  /** `webhooks.maxBodyBytes`: verify refuses a longer body; the adapters read no further. */
  maxBodyBytes: number;
}

const RECEIVED = JSON.stringify({ received: true });
const DUPLICATE = JSON.stringify({ received: true, duplicate: true });
const STORE_RETRY_AFTER_SECONDS = '5';

/**
 * `POST /webhooks`: raw body → verify → claim → dispatch → complete.
 * 200 processed or duplicate (done); 409 + Retry-After while another attempt runs it; 400 / 413 not
 * verified (500 for WEBHOOK_BODY_NOT_RAW and WEBHOOK_EVENT_ID_MISMATCH: the receiver's setup); 500 a handler
 * failed (claim released, the retry is processed); 503 store unavailable.
 * The store is touched only after the signature checked out.
 */
export function webhookRoute(deps: WebhookRouteDeps): Route {
  const { logger } = deps;
  const retryAfter = String(Math.max(1, Math.min(10, Math.ceil(deps.dedupe.leaseMs / 1000))));
  return {
    method: 'POST',
    path: '/webhooks',
    maxBodyBytes: deps.maxBodyBytes,
    async handler(request) {
      if (request.rawBody === undefined) {
        const error = bodyNotRawFor(request);
        // The app's setup, not the delivery: an error, logged here once (the router would log a 5xx again).
        logger.error({ code: error.code, reason: error.message, eventId: claimedEventId(request.headers) }, 'webhook refused: the body reached paywidget-server already parsed or read; every delivery fails (500, so the sender retries) until the app is fixed');
        throw loggedWhereItArose(error);
      }
      let verified: CheckedDelivery;
      try {
        const checked = deps.verify({ rawBody: request.rawBody, headers: request.headers });
        verified = isPending(checked) ? await checked : checked;
      } catch (error) {
        // The fix is in the message (the secret to check, the clock to sync): the operator needs it, not only the sender.
        if (!(error instanceof WebhookVerificationError)) throw error;
        const fields = { code: error.code, reason: error.message, eventId: claimedEventId(request.headers) };
        if (error.status < 500) {
          logger.warn(fields, 'webhook refused');
          throw error;
        }
        // A 5xx is the receiver's setup (a body parser mounted first, the event id read from the payload): an error, logged here once.
        logger.error(fields, 'webhook refused: the receiver\'s setup, not the delivery, is at fault; every delivery fails (500, so the sender retries) until it is fixed');
        throw loggedWhereItArose(error);
      }
      const { eventId, timestamp, payload } = verified;
      // An event id the signed payload carries needs no replay guard: another id for these bytes was refused in verify.
      const signature = verified.idSigned ? undefined : getHeader(request.headers, 'x-pay-signature') as string;

      let outcome;
      try {
        outcome = await processOnce(deps.dedupe, eventId, signature, () => deps.dispatcher.dispatch({ id: eventId, payload, timestamp }));
      } catch (error) {
        return failure(error, eventId, logger);
      }
      if (outcome === 'in_progress') {
        const response = new PayError('DUPLICATE_IN_PROGRESS', `Event ${eventId} is being processed by another delivery attempt; retry later.`, { details: { eventId } }).toResponse();
        response.headers['retry-after'] = retryAfter;
        return response;
      }
      logger.debug({ eventId, outcome }, 'webhook received');
      return jsonTextResponse(200, outcome === 'duplicate' ? DUPLICATE : RECEIVED);
    },
  };
}

/** The event id an unverified delivery claims, cut short: the sender's word only, for finding it in its own logs. */
function claimedEventId(headers: PayRequest['headers']): string | undefined {
  return getHeader(headers, 'x-pay-event-id')?.slice(0, 128);
}

function failure(error: unknown, eventId: string, logger: Logger): PayResponse {
  if (error instanceof WebhookHandlerError) {
    const err = error.errors.length === 1 ? error.errors[0]! : error.cause;
    // A cause that is not an Error (what a handler threw that was not one) gets a field of its own:
    // pino's Error serializer drops it.
    const cause = err instanceof Error && !(err.cause instanceof Error) ? err.cause : undefined;
    logger.error({ err, eventId, type: error.event.type, ...(cause === undefined ? {} : { cause }) }, 'webhook handler failed; the delivery will be retried');
    return error.toResponse();
  }
  const payError = toPayError(error);
  if (payError.code === 'INTERNAL_ERROR') logger.error({ err: error, eventId }, 'webhook processing failed');
  const response = payError.toResponse();
  if (payError.code === 'STORE_UNAVAILABLE') response.headers['retry-after'] = STORE_RETRY_AFTER_SECONDS;
  return response;
}

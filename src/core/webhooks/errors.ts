import { PayError, type PayErrorOptions } from '../errors.js';
import { jsonSyntaxCause } from '../json-syntax-cause.js';
import { HAND_OVER_UNREAD, readsNodeStreams, STREAM_READ_FIX } from '../request-body.js';
import type { Framework, PayRequest } from '../types.js';
import type { WebhookEvent } from './dispatch.js';

/** Each way a delivery can fail verification; all answer 400 except BODY_TOO_LARGE (413), and WEBHOOK_BODY_NOT_RAW and WEBHOOK_EVENT_ID_MISMATCH (500: most likely the receiver's setup, so the sender retries once it is fixed). */
export type WebhookVerificationCode =
  | 'WEBHOOK_MISSING_HEADER'
  | 'WEBHOOK_MALFORMED_SIGNATURE'
  | 'WEBHOOK_MALFORMED_TIMESTAMP'
  | 'WEBHOOK_TIMESTAMP_TOO_OLD'
  | 'WEBHOOK_TIMESTAMP_IN_FUTURE'
  | 'WEBHOOK_SIGNATURE_MISMATCH'
  | 'WEBHOOK_BODY_NOT_RAW'
  | 'BODY_TOO_LARGE'
  | 'WEBHOOK_INVALID_JSON'
  | 'WEBHOOK_EVENT_ID_MISMATCH';

/** A delivery that must not be trusted, with a message saying how to fix it. Never carries a secret. */
export class WebhookVerificationError extends PayError {
  override readonly name = 'WebhookVerificationError';
  declare readonly code: WebhookVerificationCode;

  constructor(code: WebhookVerificationCode, message: string, options?: PayErrorOptions) {
    super(code, message, options);
  }
}

/** One or more webhook handlers threw. `errors` holds what they threw; the delivery is answered 500 with a message that reveals none of it. */
export class WebhookHandlerError extends PayError {
  override readonly name = 'WebhookHandlerError';
  /** The event whose handlers failed. */
  readonly event: WebhookEvent;
  /** What each failing handler threw. */
  readonly errors: readonly Error[];

  constructor(event: WebhookEvent, errors: Error[]) {
    super(
      'WEBHOOK_HANDLER_FAILED',
      `A webhook handler failed for event ${event.id}; the claim was released so the sender's retry is processed. See the server log.`,
      { cause: errors.length === 1 ? errors[0] : new AggregateError(errors, 'Several webhook handlers failed'), details: { eventId: event.id } },
    );
    this.event = event;
    this.errors = errors;
  }
}

const BODY_NOT_RAW_WHY = 'Signatures cover the exact bytes sent, so the body must reach paywidget-server unparsed.';
const BODY_NOT_RAW_FIXES: Record<Framework, string> = {
  express: 'Express: a body parser such as express.json() read it first. Mount payMiddleware before it (app.use(\'/pay\', payMiddleware(pay)) above app.use(express.json())), or keep the bytes with express.json({ verify: (req, res, buf) => Object.assign(req, { rawBody: buf }) }).',
  'next-pages': 'Next.js Pages Router: Next\'s body parser read it first. Add export const config = { api: { bodyParser: false } } to the API route file.',
  'next-app': `Next.js App Router: the Request body was read before createRouteHandlers got it. ${HAND_OVER_UNREAD}`,
  koa: 'Koa: a body parser read it first without keeping ctx.request.rawBody. Mount payRouter(pay).routes() before the body parser, or use @koa/bodyparser, which keeps it (koa-body does with { includeUnparsed: true }).',
};
/** Every framework's fix, for a request that came through none of the adapters. */
const BODY_NOT_RAW_FIX = [BODY_NOT_RAW_WHY, ...Object.values(BODY_NOT_RAW_FIXES)].join(' ');

export const HEADER_NAMES = {
  signature: 'X-Pay-Signature',
  timestamp: 'X-Pay-Timestamp',
  eventId: 'X-Pay-Event-Id',
} as const;

export function missingHeader(header: string): WebhookVerificationError {
  return new WebhookVerificationError(
    'WEBHOOK_MISSING_HEADER',
    `The webhook delivery has no ${header} header. Pass the request headers as they arrived (Node's req.headers, a Fetch Headers or a plain object); if a proxy sits in front, make sure it forwards X-Pay-Signature, X-Pay-Timestamp and X-Pay-Event-Id.`,
    { details: { header } },
  );
}

export function malformedSignature(length: number): WebhookVerificationError {
  const found = length === 64 ? 'it has characters other than 0-9 and a-f' : `it has ${length}`;
  return new WebhookVerificationError(
    'WEBHOOK_MALFORMED_SIGNATURE',
    `X-Pay-Signature must be 64 lowercase hexadecimal characters (HMAC-SHA256 in hex); ${found}. Pass the header value unchanged.`,
    { details: { header: HEADER_NAMES.signature } },
  );
}

export function malformedTimestamp(): WebhookVerificationError {
  return new WebhookVerificationError(
    'WEBHOOK_MALFORMED_TIMESTAMP',
    'X-Pay-Timestamp must be Unix time in whole seconds, digits only (e.g. 1717171717). Pass the header value unchanged.',
    { details: { header: HEADER_NAMES.timestamp } },
  );
}

export function timestampTooOld(ageSeconds: number, toleranceSeconds: number): WebhookVerificationError {
  return new WebhookVerificationError(
    'WEBHOOK_TIMESTAMP_TOO_OLD',
    `The webhook was signed ${ageSeconds} s ago, beyond the ${toleranceSeconds} s tolerance, so it may be a replay. If genuine deliveries fail this way, check this server's clock (NTP) or raise webhooks.toleranceSeconds.`,
    { details: { ageSeconds, toleranceSeconds } },
  );
}

export function timestampInFuture(aheadSeconds: number, toleranceSeconds: number, looksLikeMs: boolean): WebhookVerificationError {
  const hint = looksLikeMs
    ? ' X-Pay-Timestamp looks like milliseconds: the sender must send Unix seconds (milliseconds / 1000, rounded down).'
    : " Check this server's clock (NTP) or raise webhooks.toleranceSeconds.";
  return new WebhookVerificationError(
    'WEBHOOK_TIMESTAMP_IN_FUTURE',
    `The webhook timestamp is ${aheadSeconds} s in the future, beyond the ${toleranceSeconds} s tolerance.${hint}`,
    { details: { aheadSeconds, toleranceSeconds, looksLikeMilliseconds: looksLikeMs } },
  );
}

/** What a mismatch may come from when the body arrived as text: a parser decoded the bytes the signature covers. */
const DECODED_TEXT_HINT = ' The body was handed over as text, decoded from the bytes (by a text body parser such as express.text() or @koa/bodyparser, or request.text()): decoding drops a byte order mark and replaces bytes that are not UTF-8, and the signature covers the bytes. Mount paywidget-server before the parser, or keep the body as a Buffer (express.raw(), or express.json({ verify }) keeping req.rawBody).';

export function signatureMismatch(secretCount: number, bodyWasText = false): WebhookVerificationError {
  return new WebhookVerificationError(
    'WEBHOOK_SIGNATURE_MISMATCH',
    `The webhook signature matches none of the ${secretCount} configured signing secret(s). Check that payment.webhookSecret (PAY_WEBHOOK_SECRET) is the signing secret from the merchant settings${secretCount > 1 ? ' (PAY_WEBHOOK_SECRET is split at each comma, a secret per piece, for rotation: a secret holding a comma must be passed in code, as an array)' : ''}, and that the body is passed exactly as received: not parsed and re-serialized, not re-encoded, not trimmed.${bodyWasText ? DECODED_TEXT_HINT : ''}`,
    { details: { secrets: secretCount } },
  );
}

/** WEBHOOK_BODY_NOT_RAW for a request that reached the webhook route without its raw bytes, saying how it lost them. */
export function bodyNotRawFor({ parsedBody, bodyUsed, framework }: Pick<PayRequest, 'parsedBody' | 'bodyUsed' | 'framework'>): WebhookVerificationError {
  if (parsedBody !== undefined) return bodyNotRaw('already parsed by a body parser (request.parsedBody is set, request.rawBody is not)', framework);
  if (bodyUsed === true) return bodyNotRaw('already read, its bytes kept nowhere (request.bodyUsed is set, request.rawBody is not)', framework, true);
  return bodyNotRaw('without its raw bytes (request.rawBody is undefined)', framework);
}

export function bodyNotRaw(what: string, framework?: Framework, streamRead = false): WebhookVerificationError {
  const fix = streamRead && readsNodeStreams(framework) ? `${BODY_NOT_RAW_WHY} ${STREAM_READ_FIX}` : framework === undefined ? BODY_NOT_RAW_FIX : `${BODY_NOT_RAW_WHY} ${BODY_NOT_RAW_FIXES[framework]}`;
  return new WebhookVerificationError('WEBHOOK_BODY_NOT_RAW', `The webhook body arrived ${what}. ${fix}`);
}

export function bodyTooLarge(maxBodyBytes: number): WebhookVerificationError {
  return new WebhookVerificationError(
    'BODY_TOO_LARGE',
    `The webhook body is larger than ${maxBodyBytes} bytes. Raise webhooks.maxBodyBytes if your deliveries are legitimately this large.`,
    { details: { maxBodyBytes } },
  );
}

/** The header's event id is not the one in the signed payload: the header, which the signature does not cover, was changed. */
export function eventIdMismatch(header: string, signed: string): WebhookVerificationError {
  const quote = (id: string) => JSON.stringify(id.slice(0, 100));
  return new WebhookVerificationError(
    'WEBHOOK_EVENT_ID_MISMATCH',
    `X-Pay-Event-Id ${quote(header)} is not the id the signed payload carries (${quote(signed)}). The signature does not cover the header, so it was changed on the way: a captured delivery sent again under another event id would run its handlers twice and have the real event taken for a duplicate. Pass the header unchanged; if your payment service's payload \`id\` is not the event id (then every delivery fails this way), set webhooks.payloadEventId to read it where it is, or to () => undefined. Answered 500, so the sender retries once that is fixed.`,
    { details: { eventId: header, payloadEventId: signed } },
  );
}

export function invalidJson(cause: unknown): WebhookVerificationError {
  return new WebhookVerificationError(
    'WEBHOOK_INVALID_JSON',
    'The webhook is correctly signed but its body is not valid JSON; the sender must send a JSON body.',
    // JSON.parse's own message would quote part of the body.
    { cause: jsonSyntaxCause(cause) },
  );
}

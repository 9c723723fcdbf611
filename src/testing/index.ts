import { randomUUID } from 'node:crypto';
import { computeSignature } from '../core/webhooks/signature.js';
import { defaultPayloadEventId } from '../core/webhooks/payload-event-id.js';

/** What `signWebhook` signs, and with what. */
export interface SignWebhookOptions<Payload = unknown> {
  /** An object is serialized with JSON.stringify; a string or bytes (a recorded delivery) are signed as they are. */
  payload: Payload;
  /** The webhook signing secret (`PAY_WEBHOOK_SECRET`, or the sandbox's `webhookSecret`). */
  secret: string;
  /** Unix seconds; defaults to now. */
  timestamp?: number | string | undefined;
  /**
   * Defaults to the payload's `id` when it is a non-empty string, as the payment service sends it, or a whole
   * number (as its digits), as the library reads it; also read from a string or bytes payload that is JSON.
   * Else a fresh `evt_` id.
   */
  eventId?: string | undefined;
}

/** A signed delivery, ready to send: the body exactly as signed (a string unless the payload was bytes), and its headers. */
export interface SignedWebhook<Body extends string | Uint8Array = string | Uint8Array> {
  /** Send this byte for byte: re-serialising it breaks the signature. */
  body: Body;
  /** Content-Type and the X-Pay-* headers the payment service sends. */
  headers: { 'content-type': string; 'x-pay-signature': string; 'x-pay-timestamp': string; 'x-pay-event-id': string };
}

/** The body signWebhook gives back for a payload: the bytes as given, else a string; either, when the type cannot tell. */
export type SignedBodyOf<Payload> = 0 extends 1 & Payload ? string | Uint8Array // any
  : unknown extends Payload ? string | Uint8Array
  : Payload extends Uint8Array ? Payload : string;

/** Signs a webhook delivery exactly as the payment service does, for merchants' own tests. */
export function signWebhook<Payload>(options: SignWebhookOptions<Payload>): SignedWebhook<SignedBodyOf<Payload>>;
export function signWebhook({ payload, secret, timestamp, eventId }: SignWebhookOptions): SignedWebhook {
  // Said here, in its own terms: node:crypto would complain of a "key" or "data" argument the caller never named.
  if (typeof secret !== 'string' || secret === '') {
    throw new TypeError(`signWebhook needs the webhook signing secret, as a non-empty string: { secret: process.env.PAY_WEBHOOK_SECRET } or the sandbox's webhookSecret (got ${secret === '' ? 'an empty string' : typeof secret}).`);
  }
  // By tag, not instanceof: a test runner's realm (jest) has typed arrays of its own.
  const tag = Object.prototype.toString.call(payload);
  if (tag === '[object ArrayBuffer]' || tag === '[object SharedArrayBuffer]' || (ArrayBuffer.isView(payload) && tag !== '[object Uint8Array]')) {
    // JSON.stringify would sign "{}" for it.
    throw new TypeError('signWebhook signs bytes given as a Uint8Array (or a Buffer): pass new Uint8Array(buffer), e.g. from await response.arrayBuffer().');
  }
  // Text or bytes (a recorded delivery) are signed as they are; anything else as its JSON.
  const asSent = typeof payload === 'string' ? payload : tag === '[object Uint8Array]' ? (payload as Uint8Array) : undefined;
  const body = asSent ?? (JSON.stringify(payload) as string | undefined);
  if (body === undefined) throw new TypeError(`signWebhook needs a payload JSON can carry: an object, a string or bytes (got ${typeof payload}).`);
  const ts = String(timestamp ?? Math.floor(Date.now() / 1000));
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-pay-signature': computeSignature(secret, ts, body),
      'x-pay-timestamp': ts,
      'x-pay-event-id': eventId ?? defaultPayloadEventId(asSent === undefined ? payload : parsedOrUndefined(asSent)) ?? `evt_${randomUUID()}`,
    },
  };
}

/**
 * A delivery given as text or bytes, read as the library reads it, for its `id`: a recorded delivery signed again
 * keeps its id, so a test of the service's retry sees the duplicate it would see in production. (The event id is
 * then the library's own reading of `id`, a whole number as its digits: a delivery it would refuse is no use in a test.)
 */
function parsedOrUndefined(sent: string | Uint8Array): unknown {
  try {
    // A byte order mark is dropped, as the library drops it (TextDecoder does so for bytes).
    return JSON.parse(typeof sent === 'string' ? sent.replace(/^\uFEFF/, '') : new TextDecoder().decode(sent));
  } catch {
    return undefined; // not JSON: nothing to take the id from
  }
}

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
  const bytes = tag === '[object Uint8Array]' ? (payload as Uint8Array) : undefined;
  const body = typeof payload === 'string' ? payload : bytes ?? (JSON.stringify(payload) as string | undefined);
  if (body === undefined) throw new TypeError(`signWebhook needs a payload JSON can carry: an object, a string or bytes (got ${typeof payload}).`);
  const ts = String(timestamp ?? Math.floor(Date.now() / 1000));
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-pay-signature': computeSignature(secret, ts, body),
      'x-pay-timestamp': ts,
      'x-pay-event-id': eventId ?? idOf(bytes ?? payload) ?? `evt_${randomUUID()}`,
    },
  };
}

/**
 * The event id the payment service would send: the payload's own `id`. A recorded delivery signed again
 * keeps its id, so a test of the service's retry sees the duplicate it would see in production.
 */
function idOf(payload: unknown): string | undefined {
  let event = payload;
  if (typeof payload === 'string' || Object.prototype.toString.call(payload) === '[object Uint8Array]') {
    try {
      // A byte order mark is dropped, as the library drops it (TextDecoder does so for bytes).
      event = JSON.parse(typeof payload === 'string' ? payload.replace(/^\uFEFF/, '') : new TextDecoder().decode(payload as Uint8Array));
    } catch {
      return undefined; // not JSON: nothing to take the id from
    }
  }
  // The library's own reading of it (a whole number as its digits): a delivery it would refuse is no use in a test.
  return defaultPayloadEventId(event);
}

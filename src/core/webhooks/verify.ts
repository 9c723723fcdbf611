import { getHeader } from '../headers.js';
import { utf8Length } from '../utf8-length.js';
import type { HeaderInput } from '../types.js';
import {
  bodyNotRaw,
  bodyTooLarge,
  eventIdMismatch,
  HEADER_NAMES,
  invalidJson,
  malformedSignature,
  malformedTimestamp,
  missingHeader,
  signatureMismatch,
  timestampInFuture,
  timestampTooOld,
} from './errors.js';
import type { Hmac, SignedBody } from './hmac.js';
import { eventIdOf, sameEventId } from './payload-event-id.js';

/** What `pay.webhooks.verify()` checks: the body exactly as received (the signature covers its exact bytes), and the request headers. */
export interface VerifyInput {
  /** The body byte for byte (a string only if it is the text as sent): a re-serialised JSON object fails the signature. */
  rawBody: Uint8Array | ArrayBuffer | string;
  /** The request headers (Node's, a Fetch `Headers` or a plain record); the X-Pay-* ones are read. */
  headers: HeaderInput;
}

/** A delivery whose signature and timestamp checked out. */
export interface VerifiedWebhook {
  /**
   * The event id: the signed payload's (`webhooks.payloadEventId`), which X-Pay-Event-Id matched; X-Pay-Event-Id
   * itself when the payload carries none, and then not covered by the signature. Deduplicate on it.
   */
  eventId: string;
  /** X-Pay-Timestamp, Unix seconds. */
  timestamp: number;
  /** The body parsed as JSON. */
  payload: unknown;
  /** Which of the configured signing secrets matched (0 = the first), useful while rotating. */
  secretIndex: number;
}

/** What the route gets: also whether the event id was checked against the signed payload's. */
export interface CheckedDelivery extends VerifiedWebhook {
  /** X-Pay-Event-Id equals the id in the signed payload: the event id is as good as signed. */
  idSigned: boolean;
}

export interface VerifyPolicy {
  toleranceSeconds: number | false;
  maxBodyBytes: number;
  /** Clock in milliseconds. */
  now: () => number;
  secretCount: number;
  /** The event id the signed payload carries (read by eventIdOf), which X-Pay-Event-Id must match; none: nothing to check against. */
  payloadEventId: (payload: unknown) => unknown;
}

const SIGNATURE = /^[0-9a-f]{64}$/;
const TIMESTAMP = /^[0-9]{1,15}$/;
/** 1e11 seconds is the year 5138, while 1e11 milliseconds was 1973: a timestamp above it is milliseconds. */
const MILLISECONDS_ABOVE = 1e11;

/**
 * Checks a delivery: raw body, headers, signature (constant time, any secret), timestamp window, JSON.
 * Synchronous when the Hmac is (node:crypto); a Promise with WebCrypto.
 */
export function verifyDelivery(hmac: Hmac, policy: VerifyPolicy, input: VerifyInput): CheckedDelivery | Promise<CheckedDelivery> {
  const body = toSignedBody(input.rawBody, policy.maxBodyBytes);
  const headers = input.headers ?? {};
  const signature = getHeader(headers, 'x-pay-signature');
  if (signature === undefined) throw missingHeader(HEADER_NAMES.signature);
  const timestamp = getHeader(headers, 'x-pay-timestamp');
  if (timestamp === undefined) throw missingHeader(HEADER_NAMES.timestamp);
  const eventId = getHeader(headers, 'x-pay-event-id');
  if (eventId === undefined || eventId === '') throw missingHeader(HEADER_NAMES.eventId);
  if (!SIGNATURE.test(signature)) throw malformedSignature(signature.length);
  if (!TIMESTAMP.test(timestamp)) throw malformedTimestamp();

  const index = hmac.match(timestamp, body, signature);
  return typeof index === 'number'
    ? accept(hmac, policy, body, timestamp, eventId, index)
    : index.then((i) => accept(hmac, policy, body, timestamp, eventId, i));
}

function accept(hmac: Hmac, policy: VerifyPolicy, body: SignedBody, timestampHeader: string, eventId: string, secretIndex: number): CheckedDelivery {
  if (secretIndex < 0) throw signatureMismatch(policy.secretCount, typeof body === 'string');
  const timestamp = Number(timestampHeader);
  const tolerance = policy.toleranceSeconds;
  if (tolerance !== false) {
    // In whole seconds, as the timestamp is (the sender rounds down): a delivery signed 299.6 s ago carries the
    // timestamp of one signed 300 s ago, so the fraction of the current second must not decide (as in Stripe's check).
    const age = Math.floor(policy.now() / 1000) - timestamp;
    if (age > tolerance) throw timestampTooOld(age, tolerance);
    if (-age > tolerance) throw timestampInFuture(-age, tolerance, timestamp > MILLISECONDS_ABOVE);
  }
  let payload: unknown;
  try {
    const text = typeof body === 'string' ? body : hmac.text(body);
    // A byte order mark, which JSON parsers may ignore (RFC 8259) and the JSON routes' TextDecoder drops: signed, but not JSON.
    payload = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (error) {
    throw invalidJson(error);
  }
  // Checked before the replay guard binds the signature: a copy sent first under another id must not take it.
  const signedId = eventIdOf(policy.payloadEventId(payload));
  if (signedId !== undefined && !sameEventId(eventId, signedId)) throw eventIdMismatch(eventId, signedId);
  // Deduplicated on the signed id where there is one: the header may differ only by how HTTP carried it.
  return { eventId: signedId ?? eventId, timestamp, payload, secretIndex, idSigned: signedId !== undefined };
}

/** The body as bytes or text, without copying; anything else (a parsed object) is refused with the framework fix. */
function toSignedBody(rawBody: unknown, maxBodyBytes: number): SignedBody {
  let body: SignedBody;
  if (typeof rawBody === 'string') {
    // UTF-8 takes 1 to 3 bytes per UTF-16 unit: count exactly only when the bounds disagree.
    if (rawBody.length > maxBodyBytes || (rawBody.length * 3 > maxBodyBytes && utf8Length(rawBody) > maxBodyBytes)) throw bodyTooLarge(maxBodyBytes);
    return rawBody;
  }
  if (rawBody instanceof Uint8Array) body = rawBody;
  else if (ArrayBuffer.isView(rawBody)) body = new Uint8Array(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  else if (rawBody instanceof ArrayBuffer || Object.prototype.toString.call(rawBody) === '[object ArrayBuffer]') body = new Uint8Array(rawBody as ArrayBuffer);
  else throw bodyNotRaw(describe(rawBody));
  if (body.byteLength > maxBodyBytes) throw bodyTooLarge(maxBodyBytes);
  return body;
}

function describe(value: unknown): string {
  if (value === undefined || value === null) return `without its raw bytes (rawBody is ${String(value)})`;
  return `already parsed (rawBody is ${Array.isArray(value) ? 'an array' : `a ${typeof value}`}, not a Buffer, Uint8Array, ArrayBuffer or string)`;
}

import { randomUUID } from 'node:crypto';
import { computeSignature } from '../core/webhooks/signature.js';

export interface SignWebhookOptions {
  /** An object is serialized with JSON.stringify; a string or bytes are signed as they are. */
  payload: unknown;
  secret: string;
  /** Unix seconds; defaults to now. */
  timestamp?: number | string;
  /** Defaults to the payload's `id` when it is a string, as the payment service sends it; else a fresh `evt_` id. */
  eventId?: string;
}

export interface SignedWebhook {
  body: string | Uint8Array;
  headers: { 'content-type': string; 'x-pay-signature': string; 'x-pay-timestamp': string; 'x-pay-event-id': string };
}

/** Signs a webhook delivery exactly as the payment service does, for merchants' own tests. */
export function signWebhook({ payload, secret, timestamp, eventId }: SignWebhookOptions): SignedWebhook {
  const body = typeof payload === 'string' || payload instanceof Uint8Array ? payload : JSON.stringify(payload);
  const ts = String(timestamp ?? Math.floor(Date.now() / 1000));
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-pay-signature': computeSignature(secret, ts, body),
      'x-pay-timestamp': ts,
      'x-pay-event-id': eventId ?? idOf(payload) ?? `evt_${randomUUID()}`,
    },
  };
}

/** The event id the payment service would send: the payload's own `id`. */
function idOf(payload: unknown): string | undefined {
  const id = typeof payload === 'object' && payload !== null && !(payload instanceof Uint8Array) ? (payload as { id?: unknown }).id : undefined;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

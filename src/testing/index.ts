import { randomUUID } from 'node:crypto';
import { computeSignature } from '../core/webhooks/signature.js';

export interface SignWebhookOptions {
  /** An object is serialized with JSON.stringify; a string or bytes are signed as they are. */
  payload: unknown;
  secret: string;
  /** Unix seconds; defaults to now. */
  timestamp?: number | string;
  /** Defaults to a fresh `evt_` id. */
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
      'x-pay-event-id': eventId ?? `evt_${randomUUID()}`,
    },
  };
}

import { createHmac } from 'node:crypto';

/** Lowercase hex HMAC-SHA256 of `<timestamp>.<raw body>`, as the payment service signs webhooks. */
export function computeSignature(secret: string, timestamp: string, rawBody: Uint8Array | string): string {
  const hmac = createHmac('sha256', secret);
  hmac.update(`${timestamp}.`, 'latin1');
  hmac.update(typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody);
  return hmac.digest('hex');
}

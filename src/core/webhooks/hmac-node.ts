import type { Hmac, SignedBody } from './hmac.js';

export interface NodeCryptoModules {
  crypto: Pick<typeof import('node:crypto'), 'createHmac' | 'createSecretKey' | 'timingSafeEqual'>;
  Buffer: typeof import('node:buffer').Buffer;
}

/** node:crypto: one HMAC per secret, updated twice (no `${timestamp}.${body}` string), compared with timingSafeEqual. */
export function nodeHmac({ crypto, Buffer }: NodeCryptoModules, secrets: readonly string[]): Hmac {
  const { createHmac, timingSafeEqual } = crypto;
  const keys = secrets.map((secret) => crypto.createSecretKey(Buffer.from(secret, 'utf8')));
  return {
    runtime: 'node',
    match(timestamp, body: SignedBody, signatureHex) {
      const expected = Buffer.from(signatureHex, 'hex');
      for (let i = 0; i < keys.length; i++) {
        // The timestamp is digits only (checked before), so latin1 is its exact encoding.
        const hmac = createHmac('sha256', keys[i]!).update(`${timestamp}.`, 'latin1');
        if (typeof body === 'string') hmac.update(body, 'utf8');
        else hmac.update(body);
        if (timingSafeEqual(hmac.digest(), expected)) return i;
      }
      return -1;
    },
    text(body) {
      return (Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength)).toString('utf8');
    },
  };
}

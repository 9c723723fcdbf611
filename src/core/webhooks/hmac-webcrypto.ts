import type { Hmac, SignedBody } from './hmac.js';

const encoder = new TextEncoder();
// Keep a BOM, as Buffer#toString does, so both paths give the same text.
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

/** WebCrypto (`crypto.subtle`), for runtimes without node:crypto. `subtle.verify` compares in constant time. */
export function webCryptoHmac(subtle: SubtleCrypto, secrets: readonly string[]): Hmac {
  let keys: Promise<CryptoKey[]> | undefined;
  const importKeys = () =>
    Promise.all(secrets.map((secret) => subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify'])));
  return {
    runtime: 'webcrypto',
    async match(timestamp, body: SignedBody, signatureHex) {
      keys ??= importKeys();
      // subtle.verify takes the data in one piece.
      const prefix = encoder.encode(`${timestamp}.`);
      const bytes = typeof body === 'string' ? encoder.encode(body) : body;
      const data = new Uint8Array(prefix.length + bytes.length);
      data.set(prefix, 0);
      data.set(bytes, prefix.length);
      const signature = hexToBytes(signatureHex);
      const results = await Promise.all((await keys).map((key) => subtle.verify('HMAC', key, signature, data)));
      return results.indexOf(true);
    },
    text(body) {
      return decoder.decode(body);
    },
  };
}

function hexToBytes(hex: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(hex.length >> 1);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

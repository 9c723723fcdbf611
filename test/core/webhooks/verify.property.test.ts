import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { VerifyInput } from 'paywidget-server';
import type { HmacFactory } from '../../../src/core/webhooks/hmac.js';
import { defaultPayloadEventId } from '../../../src/core/webhooks/payload-event-id.js';
import { computeSignature } from '../../../src/core/webhooks/signature.js';
import { T0, webCryptoFactory, webhooksWith } from './helpers.js';

/** Any correctly signed delivery is accepted; any change to body, timestamp, signature or secret is refused. */
const paths: Array<[string, HmacFactory | undefined, number]> = [
  ['node:crypto', undefined, 3000],
  ['WebCrypto', webCryptoFactory, 1000],
];

const secretArb = fc.string({ minLength: 1, maxLength: 48, unit: 'binary' });
const bodyArb = fc.uint8Array({ maxLength: 1500 });
const inWindow = fc.integer({ min: T0 - 300, max: T0 + 300 });
/** Any JSON, or an event that carries its id (a string or a whole number), as the service sends one. */
const payloadArb = fc.oneof(fc.jsonValue(), fc.record({ id: fc.oneof(fc.string(), fc.nat()), type: fc.string(), data: fc.jsonValue() }));
const shapes = ['string', 'buffer', 'uint8array', 'arraybuffer'] as const;

function shaped(json: string, shape: (typeof shapes)[number]): VerifyInput['rawBody'] {
  const bytes = new TextEncoder().encode(json);
  if (shape === 'string') return json;
  if (shape === 'buffer') return Buffer.from(bytes);
  if (shape === 'uint8array') return bytes;
  return bytes.buffer;
}

function headers(signature: string, timestamp: string, eventId = 'evt_p') {
  return { 'x-pay-signature': signature, 'x-pay-timestamp': timestamp, 'x-pay-event-id': eventId };
}

const SECRET = 'whsec_property';

for (const [name, hmac, numRuns] of paths) {
  describe(`verification properties (${name})`, () => {
    const single = webhooksWith(hmac, [SECRET]);

    it('accepts every correctly signed delivery, with the right secret index', async () => {
      await fc.assert(
        fc.asyncProperty(
          payloadArb, fc.array(secretArb, { minLength: 1, maxLength: 4 }), fc.nat(), inWindow, fc.constantFrom(...shapes), fc.string({ minLength: 1, maxLength: 64 }),
          async (value, secrets, pick, ts, shape, anyId) => {
            const signer = secrets[pick % secrets.length]!;
            const json = JSON.stringify(value);
            // A genuine delivery names the event its payload carries, when it carries one (an object's `id`).
            const eventId = defaultPayloadEventId(value) ?? anyId;
            const webhooks = webhooksWith(hmac, secrets);
            const verified = await webhooks.verify({ rawBody: shaped(json, shape), headers: headers(computeSignature(signer, String(ts), json), String(ts), eventId) });
            expect(verified).toEqual({ eventId, timestamp: ts, payload: JSON.parse(json), secretIndex: secrets.indexOf(signer) });
            // Under any other event id, the same signed bytes are refused.
            if (defaultPayloadEventId(value) !== undefined && anyId !== eventId) {
              const other = await webhooks.verifySafe({ rawBody: shaped(json, shape), headers: headers(computeSignature(signer, String(ts), json), String(ts), anyId) });
              expect(other).toMatchObject({ ok: false, code: 'WEBHOOK_EVENT_ID_MISMATCH' });
            }
          },
        ),
        { numRuns },
      );
    });

    it('refuses any change to the body', async () => {
      const mutation = fc.oneof(
        fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
        fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
        fc.record({ kind: fc.constant('delete' as const), at: fc.nat() }),
      );
      await fc.assert(
        fc.asyncProperty(bodyArb, mutation, inWindow, async (body, m, ts) => {
          const changed = Buffer.from(body);
          let mutated: Buffer;
          if (m.kind === 'flip') {
            if (body.length === 0) return;
            changed[m.at % body.length]! ^= 1 << m.bit;
            mutated = changed;
          } else if (m.kind === 'insert') {
            const at = m.at % (body.length + 1);
            mutated = Buffer.concat([changed.subarray(0, at), Buffer.from([m.byte]), changed.subarray(at)]);
          } else {
            if (body.length === 0) return;
            const at = m.at % body.length;
            mutated = Buffer.concat([changed.subarray(0, at), changed.subarray(at + 1)]);
          }
          const signature = computeSignature(SECRET, String(ts), body);
          const result = await single.verifySafe({ rawBody: mutated, headers: headers(signature, String(ts)) });
          expect(result).toMatchObject({ ok: false, code: 'WEBHOOK_SIGNATURE_MISMATCH' });
        }),
        { numRuns },
      );
    });

    it('refuses any change to the timestamp', async () => {
      const otherTimestamp = fc.oneof(
        inWindow.map(String),
        fc.integer({ min: 1, max: 5 }).map((zeros) => (ts: string) => '0'.repeat(zeros) + ts),
      );
      await fc.assert(
        fc.asyncProperty(bodyArb, inWindow, otherTimestamp, async (body, ts, other) => {
          const changed = typeof other === 'string' ? other : other(String(ts));
          fc.pre(changed !== String(ts));
          const signature = computeSignature(SECRET, String(ts), body);
          const result = await single.verifySafe({ rawBody: body, headers: headers(signature, changed) });
          expect(result).toMatchObject({ ok: false, code: 'WEBHOOK_SIGNATURE_MISMATCH' });
        }),
        { numRuns },
      );
    });

    it('refuses any change to the signature', async () => {
      const hexChar = fc.constantFrom(...'0123456789abcdef');
      await fc.assert(
        fc.asyncProperty(bodyArb, inWindow, fc.nat(63), hexChar, fc.string({ maxLength: 80 }), fc.boolean(), async (body, ts, at, char, junk, useJunk) => {
          const signature = computeSignature(SECRET, String(ts), body);
          const changed = useJunk ? junk : signature.slice(0, at) + char + signature.slice(at + 1);
          fc.pre(changed !== signature);
          const result = await single.verifySafe({ rawBody: body, headers: headers(changed, String(ts)) });
          const expected = /^[0-9a-f]{64}$/.test(changed) ? 'WEBHOOK_SIGNATURE_MISMATCH' : 'WEBHOOK_MALFORMED_SIGNATURE';
          expect(result).toMatchObject({ ok: false, code: expected });
        }),
        { numRuns },
      );
    });

    it('refuses a delivery signed with any other secret', async () => {
      await fc.assert(
        fc.asyncProperty(bodyArb, inWindow, secretArb, async (body, ts, other) => {
          fc.pre(Buffer.from(other, 'utf8').toString('utf8') !== SECRET);
          const result = await single.verifySafe({ rawBody: body, headers: headers(computeSignature(other, String(ts), body), String(ts)) });
          expect(result).toMatchObject({ ok: false, code: 'WEBHOOK_SIGNATURE_MISMATCH' });
        }),
        { numRuns },
      );
    });
  });
}

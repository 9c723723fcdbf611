import * as nodeCrypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { WebhookVerificationError, type VerifyInput } from 'paywidget-server';
import { signWebhook } from 'paywidget-server/testing';
import { selectHmac, type HmacFactory } from '../../../src/core/webhooks/hmac.js';
import { nodeHmac } from '../../../src/core/webhooks/hmac-node.js';
import { webCryptoHmac } from '../../../src/core/webhooks/hmac-webcrypto.js';
import { SECRET, T0, webCryptoFactory, webhooksWith } from './helpers.js';

describe('selectHmac: node:crypto on Node, WebCrypto elsewhere', () => {
  it('picks node:crypto on Node, synchronously', () => {
    const factory = selectHmac();
    expect(typeof factory).toBe('function');
    expect((factory as HmacFactory)([SECRET]).runtime).toBe('node');
  });

  it('picks WebCrypto without process (edge runtimes) or without node:crypto', () => {
    expect(webCryptoFactory([SECRET]).runtime).toBe('webcrypto');
    const noBuiltin = selectHmac({ process: { getBuiltinModule: () => undefined }, crypto: globalThis.crypto }) as HmacFactory;
    expect(noBuiltin([SECRET]).runtime).toBe('webcrypto');
  });

  it("picks WebCrypto where process.getBuiltinModule throws, as on Next's edge runtime", () => {
    const throwing = () => {
      throw new Error('A Node.js API is used (process.getBuiltinModule) which is not supported in the Edge Runtime.');
    };
    const calling = selectHmac({ process: { getBuiltinModule: throwing }, crypto: globalThis.crypto }) as HmacFactory;
    expect(calling([SECRET]).runtime).toBe('webcrypto');
    const reading = selectHmac({ process: Object.defineProperty({}, 'getBuiltinModule', { get: throwing }), crypto: globalThis.crypto }) as HmacFactory;
    expect(reading([SECRET]).runtime).toBe('webcrypto');
  });

  it('on a Node without process.getBuiltinModule (before 20.16) imports node:crypto once', async () => {
    const original = process.getBuiltinModule;
    try {
      (process as { getBuiltinModule?: unknown }).getBuiltinModule = undefined;
      const pending = selectHmac();
      expect(pending).toBeInstanceOf(Promise);
      expect((await pending)([SECRET]).runtime).toBe('node');
    } finally {
      process.getBuiltinModule = original;
    }
  });

  it('a runtime with no crypto at all fails on first use with a clear error', async () => {
    const none = selectHmac({}) as HmacFactory;
    expect(() => none([SECRET])).toThrow(/neither node:crypto nor WebCrypto/);
  });
});

describe('the WebCrypto path gives the same answers as node:crypto', () => {
  const node = webhooksWith(undefined, ['whsec_old', SECRET]);
  const web = webhooksWith(webCryptoFactory, ['whsec_old', SECRET]);

  const nonUtf8 = Buffer.concat([Buffer.from('\ufeff{"type":"t","name":"caf'), Buffer.from([0xe9, 0xff]), Buffer.from('"}')]);
  const cases: Array<[string, () => VerifyInput]> = [
    ['a string body', () => sign({ type: 'payment.succeeded', amount: 1999 })],
    ['a Buffer body', () => ({ ...sign('{"a":"ü"}'), rawBody: Buffer.from('{"a":"ü"}') })],
    ['an ArrayBuffer body', () => { const s = sign('[1,2]'); return { ...s, rawBody: new TextEncoder().encode('[1,2]').buffer }; }],
    ['bytes that are not UTF-8, with a BOM', () => sign(nonUtf8)],
    ['the BOM-less non-UTF-8 bytes', () => sign(nonUtf8.subarray(3))],
    ['a mismatch', () => ({ ...sign('{}'), rawBody: '{ }' })],
    ['another secret', () => sign('{}', 'whsec_other')],
    ['invalid JSON', () => sign('{')],
    ['a stale timestamp', () => sign('{}', SECRET, T0 - 301)],
    ['a millisecond timestamp', () => sign('{}', SECRET, T0 * 1000)],
    ['a malformed signature', () => { const s = sign('{}'); return { ...s, headers: { ...s.headers, 'x-pay-signature': 'abc' } }; }],
  ];

  function sign(payload: unknown, secret = SECRET, timestamp = T0): VerifyInput {
    const signed = signWebhook({ payload, secret, timestamp, eventId: 'evt_x' });
    return { rawBody: signed.body, headers: signed.headers };
  }

  for (const [name, make] of cases) {
    it(name, async () => {
      const input = make();
      const [a, b] = await Promise.all([node.verifySafe(input), web.verifySafe(input)]);
      if (a.ok && b.ok) expect(b.event).toEqual(a.event);
      else if (!a.ok && !b.ok) {
        expect(b.code).toBe(a.code);
        expect(b.error.message).toBe(a.error.message);
        expect(b.error).toBeInstanceOf(WebhookVerificationError);
      } else expect.fail(`node ${a.ok ? 'accepted' : 'refused'}, webcrypto ${b.ok ? 'accepted' : 'refused'}`);
    });
  }

  it('reports the right secret index on both paths', async () => {
    const input = sign({ type: 'x' });
    expect((await web.verify(input)).secretIndex).toBe(1);
    expect((await web.verify(sign({ type: 'x' }, 'whsec_old'))).secretIndex).toBe(0);
  });
});

describe('the signature comparison is constant-time', () => {
  const signed = signWebhook({ payload: { type: 'x' }, secret: 'whsec_new', timestamp: T0 });
  const timestamp = signed.headers['x-pay-timestamp']!;
  const signature = signed.headers['x-pay-signature']!;
  const body = Buffer.from(signed.body as string);

  it('node:crypto: timingSafeEqual decides, once per secret tried', () => {
    const compared: number[] = [];
    const crypto = { ...nodeCrypto, timingSafeEqual: (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => (compared.push(a.byteLength), nodeCrypto.timingSafeEqual(a, b)) };
    const hmac = nodeHmac({ crypto, Buffer }, ['whsec_old', 'whsec_new']);
    expect(hmac.match(timestamp, body, signature)).toBe(1);
    expect(compared).toEqual([32, 32]);
  });

  it('WebCrypto: subtle.verify decides, never a digest compared in JavaScript', async () => {
    const calls: string[] = [];
    const subtle = new Proxy(globalThis.crypto.subtle, {
      get: (target, name: string) => (...args: unknown[]) => (calls.push(name), (target[name as keyof SubtleCrypto] as (...a: unknown[]) => unknown).apply(target, args)),
    });
    const hmac = webCryptoHmac(subtle, ['whsec_old', 'whsec_new']);
    expect(await hmac.match(timestamp, body, signature)).toBe(1);
    expect(calls.filter((name) => name !== 'importKey')).toEqual(['verify', 'verify']);
  });
});

/**
 * signWebhook as a merchant's own tests use it: deliveries sent over real HTTP to an Express app with
 * payMiddleware, including a recorded delivery (its raw text or bytes) signed again.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runInNewContext } from 'node:vm';
import express from 'express';
import { createPay } from 'paywidget-server';
import { payMiddleware } from 'paywidget-server/express';
import { signWebhook, type SignedWebhook } from 'paywidget-server/testing';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';

const SECRET = 'whsec_sign_webhook_test';
const handled: string[] = [];
let server: Server;
let url: string;

beforeAll(async () => {
  const pay = createPay({ env: {}, payment: { apiUrl: 'http://127.0.0.1:9', merchantId: 'm', apiKey: 'k', webhookSecret: SECRET } });
  pay.webhooks.onAny((event) => void handled.push(event.id));
  const app = express();
  app.use('/pay', payMiddleware(pay));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/pay/webhooks`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

/** Sends a signed delivery as it is: `body` needs no cast for fetch, whatever the payload was. */
async function deliver(signed: SignedWebhook<string | Uint8Array<ArrayBuffer>>) {
  const response = await fetch(url, { method: 'POST', headers: signed.headers, body: signed.body });
  return { status: response.status, body: (await response.json()) as unknown };
}

describe('signWebhook', () => {
  it('keeps the id of a recorded delivery signed again from its text, so the retry is the duplicate it is in production', async () => {
    const recorded = '{"id":"evt_recorded_text","type":"payment.succeeded","data":{"payment_id":"pay_1","order_id":"1001","amount":1999,"currency":"EUR"}}';
    const first = signWebhook({ payload: recorded, secret: SECRET, timestamp: Math.floor(Date.now() / 1000) - 1 });
    const retry = signWebhook({ payload: recorded, secret: SECRET });
    expect(first.headers['x-pay-event-id']).toBe('evt_recorded_text');
    expect(first.body).toBe(recorded); // signed as it is, not re-serialized
    expect(await deliver(first)).toEqual({ status: 200, body: { received: true } });
    expect(await deliver(retry)).toEqual({ status: 200, body: { received: true, duplicate: true } });
    expect(handled.filter((id) => id === 'evt_recorded_text')).toHaveLength(1);
  });

  it('reads the id from bytes too, and gives them back as they were', async () => {
    const bytes = new TextEncoder().encode('{"id":"evt_recorded_bytes","type":"payment.failed","data":{"payment_id":"pay_2"}}');
    const signed = signWebhook({ payload: bytes, secret: SECRET });
    expect(signed.headers['x-pay-event-id']).toBe('evt_recorded_bytes');
    expect(signed.body).toBe(bytes);
    expect(await deliver(signed)).toEqual({ status: 200, body: { received: true } });
    expect(handled).toContain('evt_recorded_bytes');
  });

  it('reads the id of a text that begins with a byte order mark, as the library does, so the delivery is accepted', async () => {
    const signed = signWebhook({ payload: '\uFEFF{"id":"evt_bom","type":"payment.succeeded"}', secret: SECRET });
    expect(signed.headers['x-pay-event-id']).toBe('evt_bom');
    expect(await deliver(signed)).toEqual({ status: 200, body: { received: true } });
  });

  it('takes a whole-number id as its digits, as the library reads it, so the delivery is accepted', async () => {
    const signed = signWebhook({ payload: { id: 42, type: 'payment.succeeded' }, secret: SECRET });
    expect(signed.headers['x-pay-event-id']).toBe('42');
    expect(await deliver(signed)).toEqual({ status: 200, body: { received: true } });
  });

  it('takes an explicit eventId over the payload\'s, and makes a fresh one for a payload without an id', async () => {
    expect(signWebhook({ payload: '{"id":"evt_in_body"}', secret: SECRET, eventId: 'evt_given' }).headers['x-pay-event-id']).toBe('evt_given');
    const objectId = signWebhook({ payload: { id: 'evt_object', type: 'payment.succeeded' }, secret: SECRET });
    expect(objectId.headers['x-pay-event-id']).toBe('evt_object');
    expect(typeof objectId.body).toBe('string');
    const fresh = [signWebhook({ payload: 'not json', secret: SECRET }), signWebhook({ payload: '{"type":"x"}', secret: SECRET }), signWebhook({ payload: '[1]', secret: SECRET })];
    for (const signed of fresh) expect(signed.headers['x-pay-event-id']).toMatch(/^evt_[0-9a-f-]{36}$/);
    expect(new Set(fresh.map((signed) => signed.headers['x-pay-event-id'])).size).toBe(3);
  });

  it('refuses what it cannot sign as meant, naming the option: no secret, an empty one, no payload, bytes not in a Uint8Array', () => {
    expect(() => signWebhook({ payload: {}, secret: undefined as never })).toThrow('signWebhook needs the webhook signing secret, as a non-empty string: { secret: process.env.PAY_WEBHOOK_SECRET } or the sandbox\'s webhookSecret (got undefined).');
    expect(() => signWebhook({ payload: {}, secret: '' })).toThrow('(got an empty string)');
    expect(() => signWebhook({ payload: undefined, secret: SECRET })).toThrow('signWebhook needs a payload JSON can carry: an object, a string or bytes (got undefined).');
    const bytes = new TextEncoder().encode('{"id":"evt_bytes"}');
    for (const payload of [bytes.buffer, new DataView(bytes.buffer), new Uint16Array(2)]) {
      expect(() => signWebhook({ payload, secret: SECRET })).toThrow('pass new Uint8Array(buffer)');
    }
    expect(signWebhook({ payload: Buffer.from(bytes), secret: SECRET }).headers['x-pay-event-id']).toBe('evt_bytes');
  });

  it('signs bytes made in another realm (a jest test\'s Uint8Array) as the bytes they are', async () => {
    const foreign = runInNewContext('new Uint8Array(bytes)', { bytes: [...new TextEncoder().encode('{"id":"evt_realm","type":"payment.succeeded"}')] }) as Uint8Array<ArrayBuffer>;
    expect(foreign instanceof Uint8Array).toBe(false);
    const signed = signWebhook({ payload: foreign, secret: SECRET });
    expect(signed.body).toBe(foreign);
    expect(signed.headers['x-pay-event-id']).toBe('evt_realm');
    expect(await deliver(signed)).toEqual({ status: 200, body: { received: true } });
  });

  it('types the body as what it is at run time (npm test type-checks these lines)', () => {
    const recorded: string | Uint8Array = Math.random() < 2 ? new TextEncoder().encode('{}') : '{}';
    const parsed: unknown = JSON.parse('{"id":"evt_any"}');
    expectTypeOf(signWebhook({ payload: { id: 'evt_1' }, secret: SECRET }).body).toEqualTypeOf<string>();
    expectTypeOf(signWebhook({ payload: '{}', secret: SECRET }).body).toEqualTypeOf<string>();
    expectTypeOf(signWebhook({ payload: new TextEncoder().encode('{}'), secret: SECRET }).body).toEqualTypeOf<Uint8Array<ArrayBuffer>>();
    // A payload whose type cannot tell bytes from text gets both, not a string that may be bytes.
    expectTypeOf(signWebhook({ payload: recorded, secret: SECRET }).body).toEqualTypeOf<string | Uint8Array>();
    expectTypeOf(signWebhook({ payload: parsed, secret: SECRET }).body).toEqualTypeOf<string | Uint8Array>();
    expectTypeOf(signWebhook({ payload: JSON.parse('{}') as any, secret: SECRET }).body).toEqualTypeOf<string | Uint8Array>(); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(typeof signWebhook({ payload: recorded, secret: SECRET }).body).toBe('object'); // bytes, as the type allows
  });
});


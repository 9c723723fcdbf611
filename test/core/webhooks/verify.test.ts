import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createPay, ERROR_STATUS, PayError, WebhookVerificationError, type VerifyInput, type WebhookVerificationCode } from 'paywidget-server';
import { signWebhook } from 'paywidget-server/testing';
import { computeSignature } from '../../../src/core/webhooks/signature.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { delivery, payWithClock, post, SECRET, T0 } from './helpers.js';

async function failure(promise: Promise<unknown>): Promise<WebhookVerificationError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(WebhookVerificationError);
  expect(error).toBeInstanceOf(PayError);
  return error as WebhookVerificationError;
}

const payload = { type: 'payment.succeeded', data: { payment_id: 'pay_1', order_id: 'ord_1', amount: 1999, currency: 'EUR' } };

describe('pay.webhooks.verify: genuine deliveries', () => {
  const { pay } = payWithClock();

  it('accepts a string body and answers { eventId, timestamp, payload, secretIndex }', async () => {
    const d = delivery(payload, { eventId: 'evt_abc' });
    expect(await pay.webhooks.verify({ rawBody: d.body, headers: d.headers })).toEqual({ eventId: 'evt_abc', timestamp: T0, payload, secretIndex: 0 });
  });

  it('accepts the same bytes as a Buffer, a Uint8Array (offset into a larger buffer) and an ArrayBuffer', async () => {
    const d = delivery(payload);
    const bytes = Buffer.from(d.body as string, 'utf8');
    const padded = new Uint8Array(bytes.length + 10);
    padded.set(bytes, 5);
    const view = padded.subarray(5, 5 + bytes.length);
    const arrayBuffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    for (const rawBody of [bytes, new Uint8Array(bytes), view, arrayBuffer, new DataView(arrayBuffer)]) {
      const verified = await pay.webhooks.verify({ rawBody: rawBody as VerifyInput['rawBody'], headers: d.headers });
      expect(verified.payload).toEqual(payload);
    }
  });

  it('reads a signed body that starts with a byte order mark, as the JSON routes do', async () => {
    const text = `\ufeff${JSON.stringify(payload)}`;
    const signed = signWebhook({ payload: Buffer.from(text, 'utf8'), secret: SECRET, timestamp: T0, eventId: 'evt_bom' });
    expect((await pay.webhooks.verify({ rawBody: signed.body, headers: signed.headers })).payload).toEqual(payload);
    expect((await pay.webhooks.verify({ rawBody: text, headers: signed.headers })).payload).toEqual(payload);
  });

  it('verifies a body that is not valid UTF-8 exactly as it was signed', async () => {
    const body = Buffer.concat([Buffer.from('{"type":"t","name":"caf'), Buffer.from([0xe9, 0xff, 0xc3]), Buffer.from('"}')]);
    const signed = signWebhook({ payload: body, secret: SECRET, timestamp: T0, eventId: 'evt_latin1' });
    const verified = await pay.webhooks.verify({ rawBody: signed.body, headers: signed.headers });
    // Invalid sequences read as U+FFFD in the parsed payload; the signature covered the bytes.
    expect(verified.payload).toEqual({ type: 't', name: 'caf\ufffd\ufffd\ufffd' });
    // Decoding and re-encoding would change the bytes, and the signature with them: the error says so for a body given as text.
    const decoded = await failure(pay.webhooks.verify({ rawBody: body.toString('utf8'), headers: signed.headers }));
    expect(decoded.message).toMatch(/handed over as text, decoded from the bytes .*replaces bytes that are not UTF-8.*express\.raw\(\)/);
    const forged = await failure(pay.webhooks.verify({ rawBody: Buffer.from('{"type":"t"}'), headers: signed.headers }));
    expect(forged.code).toBe('WEBHOOK_SIGNATURE_MISMATCH');
    expect(forged.message).not.toContain('handed over as text');
  });

  it('takes Node headers, a Fetch Headers and a plain record with any casing', async () => {
    const d = delivery(payload);
    const shapes = [
      d.headers,
      new Headers(d.headers),
      { 'X-Pay-Signature': d.headers['x-pay-signature'], 'X-PAY-TIMESTAMP': d.headers['x-pay-timestamp'], 'x-Pay-Event-ID': d.headers['x-pay-event-id'] },
      // An array of one value (Node's headersDistinct shape).
      { ...d.headers, 'x-pay-signature': [d.headers['x-pay-signature']!] },
    ];
    for (const headers of shapes) expect((await pay.webhooks.verify({ rawBody: d.body, headers })).eventId).toBe('evt_1');
  });

  it('refuses a repeated signature header, as a Fetch Headers and Node both join it', async () => {
    const d = delivery(payload);
    const repeated = new Headers(d.headers);
    repeated.append('x-pay-signature', d.headers['x-pay-signature']!);
    for (const headers of [repeated, { ...d.headers, 'x-pay-signature': [d.headers['x-pay-signature']!, d.headers['x-pay-signature']!] }]) {
      expect((await failure(pay.webhooks.verify({ rawBody: d.body, headers }))).code).toBe('WEBHOOK_MALFORMED_SIGNATURE');
    }
  });

  it('rotation: any configured secret verifies and secretIndex says which', async () => {
    const rotating = createPay({ payment: { apiUrl: 'http://127.0.0.1:9', merchantId: 'm', apiKey: 'k', webhookSecret: ['whsec_old', 'whsec_new', 'whsec_next'] }, env: {} });
    const ts = Math.floor(Date.now() / 1000);
    for (const [secretIndex, secret] of ['whsec_old', 'whsec_new', 'whsec_next'].entries()) {
      const signed = signWebhook({ payload, secret, timestamp: ts });
      expect(await rotating.webhooks.verify({ rawBody: signed.body, headers: signed.headers })).toMatchObject({ secretIndex, payload });
    }
    const other = signWebhook({ payload, secret: 'whsec_retired', timestamp: ts });
    const mismatch = await failure(rotating.webhooks.verify({ rawBody: other.body, headers: other.headers }));
    expect(mismatch.code).toBe('WEBHOOK_SIGNATURE_MISMATCH');
    // With several secrets, the message says how the variable is split: a secret holding a comma came out in pieces.
    expect(mismatch.message).toContain('PAY_WEBHOOK_SECRET is split at each comma, a secret per piece, for rotation: a secret holding a comma must be passed in code, as an array');
  });

  it('reads comma-separated secrets from PAY_WEBHOOK_SECRET', async () => {
    const fromEnv = createPay({ env: { PAY_API_URL: 'http://127.0.0.1:9', PAY_MERCHANT_ID: 'm', PAY_MERCHANT_API_KEY: 'k', PAY_WEBHOOK_SECRET: 'whsec_a,whsec_b' } });
    const signed = signWebhook({ payload, secret: 'whsec_b' });
    expect((await fromEnv.webhooks.verify({ rawBody: signed.body, headers: signed.headers })).secretIndex).toBe(1);
  });

  it('verifySafe answers { ok: true, event } and { ok: false, code, error }', async () => {
    const d = delivery(payload);
    expect(await pay.webhooks.verifySafe({ rawBody: d.body, headers: d.headers })).toEqual({ ok: true, event: { eventId: 'evt_1', timestamp: T0, payload, secretIndex: 0 } });
    const bad = await pay.webhooks.verifySafe({ rawBody: `${d.body as string} `, headers: d.headers });
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    expect(bad.code).toBe('WEBHOOK_SIGNATURE_MISMATCH');
    expect(bad.error).toBeInstanceOf(WebhookVerificationError);
    expect(bad.error.code).toBe(bad.code);
  });
});

describe('a payment service whose payload `id` is not the event id', () => {
  it('has each delivery answered 500 and logged once as an error naming the fix, so its retries get through once payloadEventId is set', async () => {
    const logger = captureLogger();
    const misread = payWithClock({ logger }).pay;
    // The payment's id at the top, the event id only in the header.
    const sent = delivery({ id: 'pay_77', type: 'payment.succeeded', data: { payment_id: 'pay_77', status: 'succeeded' } }, { eventId: 'evt_77' });
    const first = await post(misread, { body: sent.body as string, headers: sent.headers });
    expect([first.status, first.json.error?.code]).toEqual([500, 'WEBHOOK_EVENT_ID_MISMATCH']);
    const said = logger.lines.map((line) => JSON.parse(line) as { level: string; msg: string; reason?: string }).filter((line) => line.level === 'error' || line.level === 'warn');
    expect(said).toHaveLength(1);
    expect(said[0]!.level).toBe('error');
    expect(said[0]!.reason).toContain('set webhooks.payloadEventId');

    // The sender retries the same delivery; the receiver now reads the event id where this service puts it.
    const fixed = payWithClock({ webhooks: { payloadEventId: () => undefined } }).pay;
    let runs = 0;
    fixed.webhooks.onAny(() => void runs++);
    expect((await post(fixed, { body: sent.body as string, headers: sent.headers })).json).toEqual({ received: true });
    expect(runs).toBe(1);
  });
});

describe('pay.webhooks.verify: the event id, which the signature does not cover', () => {
  it('must be the signed payload\'s id when it has one: a captured delivery sent first under another id neither runs nor takes that event', async () => {
    const { pay } = payWithClock();
    const runs: string[] = [];
    pay.webhooks.onAny((event) => void runs.push(`${event.id}:${(event.payload as { id: string }).id}`));
    const genuineA = delivery({ ...payload, id: 'evt_A' }, { eventId: 'evt_A' });
    // The same signed bytes, raced ahead of the genuine delivery with a later event's id.
    const forged = await post(pay, { body: genuineA.body as string, headers: { ...genuineA.headers, 'x-pay-event-id': 'evt_B' } });
    // 500: where every delivery mismatches, the payload's id is not the event id, and the sender's retries get through once that is set.
    expect(forged.status).toBe(500);
    expect(forged.json.error?.code).toBe('WEBHOOK_EVENT_ID_MISMATCH');
    // Nothing was bound or claimed: the genuine A runs, and B, when it comes, is no duplicate.
    expect((await post(pay, { body: genuineA.body as string, headers: genuineA.headers })).status).toBe(200);
    const genuineB = delivery({ ...payload, id: 'evt_B', data: { ...payload.data, payment_id: 'pay_B' } }, { eventId: 'evt_B' });
    const b = await post(pay, { body: genuineB.body as string, headers: genuineB.headers });
    expect(b.status).toBe(200);
    expect(b.json).toEqual({ received: true });
    expect(runs).toEqual(['evt_A:evt_A', 'evt_B:evt_B']);
  });

  it('reads a numeric payload id as its digits, and checks nothing in a payload without an id', async () => {
    const { pay } = payWithClock();
    const numeric = delivery({ ...payload, id: 123 }, { eventId: '123' });
    expect((await pay.webhooks.verify({ rawBody: numeric.body, headers: numeric.headers })).eventId).toBe('123');
    const other = delivery({ ...payload, id: 123 }, { eventId: '124' });
    expect((await pay.webhooks.verifySafe({ rawBody: other.body, headers: other.headers }))).toMatchObject({ ok: false, code: 'WEBHOOK_EVENT_ID_MISMATCH' });
    const bare = delivery(payload, { eventId: 'evt_any' });
    expect((await pay.webhooks.verify({ rawBody: bare.body, headers: bare.headers })).eventId).toBe('evt_any');
  });

  it('takes the header as the payload\'s id when only the way HTTP carries it changed it: UTF-8 read as Latin-1, spaces at its ends', async () => {
    const { pay } = payWithClock();
    for (const id of ['evt é', 'evt_€', ' evt_lead', 'evt_trail\t']) {
      // What Node and undici hand over for a header a sender wrote in UTF-8, its ends trimmed by the parser.
      const header = Buffer.from(id, 'utf8').toString('latin1').replace(/^[ \t]+|[ \t]+$/g, '');
      const d = delivery({ ...payload, id }, { eventId: header });
      // Deduplicated on the signed id, which the sender meant.
      expect((await pay.webhooks.verify({ rawBody: d.body, headers: d.headers })).eventId).toBe(id);
    }
    // Another id is still another id.
    const other = delivery({ ...payload, id: 'evt é' }, { eventId: Buffer.from('evt è', 'utf8').toString('latin1') });
    expect(await pay.webhooks.verifySafe({ rawBody: other.body, headers: other.headers })).toMatchObject({ ok: false, code: 'WEBHOOK_EVENT_ID_MISMATCH' });
  });

  it('takes what a custom webhooks.payloadEventId answers as an id: a whole number as its digits, null or \'\' as none; anything else is a configuration error', async () => {
    const byNumber = payWithClock({ webhooks: { payloadEventId: (p) => (p as { seq?: number }).seq as never } });
    const numbered = delivery({ ...payload, seq: 42 }, { eventId: '42' });
    expect((await byNumber.pay.webhooks.verify({ rawBody: numbered.body, headers: numbered.headers })).eventId).toBe('42');
    const wrong = delivery({ ...payload, seq: 43 }, { eventId: '42' });
    expect(await byNumber.pay.webhooks.verifySafe({ rawBody: wrong.body, headers: wrong.headers })).toMatchObject({ ok: false, code: 'WEBHOOK_EVENT_ID_MISMATCH' });
    for (const none of [null, '']) {
      const absent = payWithClock({ webhooks: { payloadEventId: () => none as never } });
      const d = delivery({ ...payload, id: 'evt_x' }, { eventId: 'evt_header' });
      expect((await absent.pay.webhooks.verify({ rawBody: d.body, headers: d.headers })).eventId).toBe('evt_header');
    }
    const objects = payWithClock({ webhooks: { payloadEventId: (p) => p as never } });
    const d = delivery(payload);
    await expect(objects.pay.webhooks.verify({ rawBody: d.body, headers: d.headers })).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringContaining('webhooks.payloadEventId answered an object') });
  });

  it('is read where webhooks.payloadEventId says, and not checked when it answers undefined', async () => {
    const nested = payWithClock({ webhooks: { payloadEventId: (p) => (p as { event?: { id?: string } }).event?.id } });
    const body = { ...payload, id: 'obj_1', event: { id: 'evt_N' } };
    const good = delivery(body, { eventId: 'evt_N' });
    expect((await nested.pay.webhooks.verify({ rawBody: good.body, headers: good.headers })).eventId).toBe('evt_N');
    const bad = delivery(body, { eventId: 'obj_1' });
    expect(await nested.pay.webhooks.verifySafe({ rawBody: bad.body, headers: bad.headers })).toMatchObject({ ok: false, code: 'WEBHOOK_EVENT_ID_MISMATCH' });
    const off = payWithClock({ webhooks: { payloadEventId: () => undefined } });
    expect((await off.pay.webhooks.verify({ rawBody: bad.body, headers: bad.headers })).eventId).toBe('obj_1');
    expect(() => payWithClock({ webhooks: { payloadEventId: 'id' as never } })).toThrow(/webhooks\.payloadEventId must be a function/);
  });
});

describe('pay.webhooks.verify: the timestamp window', () => {
  it('accepts up to 300 s either way by default and refuses beyond', async () => {
    const { pay, clock } = payWithClock();
    const d = delivery(payload);
    const at = async (offsetSeconds: number) => {
      clock.now = (T0 + offsetSeconds) * 1000;
      return pay.webhooks.verifySafe({ rawBody: d.body, headers: d.headers });
    };
    expect((await at(300)).ok).toBe(true);
    expect((await at(-300)).ok).toBe(true);
    // Whole seconds, as the sender rounds down when it signs: a delivery signed 299.6 s ago carries the same
    // timestamp as one signed exactly 300 s ago, so the clock's fraction of a second decides nothing.
    expect((await at(300.999)).ok).toBe(true);
    const late = await at(301);
    expect(late).toMatchObject({ ok: false, code: 'WEBHOOK_TIMESTAMP_TOO_OLD' });
    expect(late.ok === false && late.error.message).toMatch(/signed 301 s ago, beyond the 300 s tolerance/);
    expect(await at(-301)).toMatchObject({ ok: false, code: 'WEBHOOK_TIMESTAMP_IN_FUTURE' });
  });

  it('is configurable, and switched off only by false', async () => {
    const narrow = payWithClock({ webhooks: { toleranceSeconds: 10 } });
    narrow.clock.now = (T0 + 11) * 1000;
    const d = delivery(payload);
    expect((await narrow.pay.webhooks.verifySafe({ rawBody: d.body, headers: d.headers })).ok).toBe(false);

    const off = payWithClock({ webhooks: { toleranceSeconds: false } });
    off.clock.now = (T0 + 365 * 86_400) * 1000;
    expect((await off.pay.webhooks.verifySafe({ rawBody: d.body, headers: d.headers })).ok).toBe(true);

    for (const toleranceSeconds of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, null, true, '300']) {
      expect(() => payWithClock({ webhooks: { toleranceSeconds: toleranceSeconds as number } })).toThrow(/webhooks\.toleranceSeconds .*false to switch the check off/);
    }
  });

  it('hints that a timestamp in milliseconds must be seconds', async () => {
    const { pay } = payWithClock();
    const d = delivery(payload, { timestamp: T0 * 1000 });
    const error = await failure(pay.webhooks.verify({ rawBody: d.body, headers: d.headers }));
    expect(error.code).toBe('WEBHOOK_TIMESTAMP_IN_FUTURE');
    expect(error.message).toMatch(/looks like milliseconds.*Unix seconds/);
    const ahead = delivery(payload, { timestamp: T0 + 3600 });
    expect((await failure(pay.webhooks.verify({ rawBody: ahead.body, headers: ahead.headers }))).message).toMatch(/clock/);
  });
});

/** One way to reach each verification code, through verify and through the route. */
function failingDeliveries(): Record<WebhookVerificationCode, { input: VerifyInput; message: RegExp; options?: Parameters<typeof payWithClock>[0] }> {
  const d = delivery(payload);
  const without = (name: string) => Object.fromEntries(Object.entries(d.headers).filter(([k]) => k !== name));
  return {
    WEBHOOK_MISSING_HEADER: { input: { rawBody: d.body, headers: without('x-pay-signature') }, message: /no X-Pay-Signature header/ },
    WEBHOOK_MALFORMED_SIGNATURE: { input: { rawBody: d.body, headers: { ...d.headers, 'x-pay-signature': d.headers['x-pay-signature']!.toUpperCase() } }, message: /64 lowercase hexadecimal/ },
    WEBHOOK_MALFORMED_TIMESTAMP: { input: { rawBody: d.body, headers: { ...d.headers, 'x-pay-timestamp': '2024-06-01T00:00:00Z' } }, message: /Unix time in whole seconds/ },
    WEBHOOK_TIMESTAMP_TOO_OLD: { input: (() => { const old = delivery(payload, { timestamp: T0 - 301 }); return { rawBody: old.body, headers: old.headers }; })(), message: /301 s ago, beyond the 300 s tolerance/ },
    WEBHOOK_TIMESTAMP_IN_FUTURE: { input: (() => { const f = delivery(payload, { timestamp: T0 + 302 }); return { rawBody: f.body, headers: f.headers }; })(), message: /302 s in the future/ },
    WEBHOOK_SIGNATURE_MISMATCH: { input: { rawBody: (d.body as string).replace('1999', '1'), headers: d.headers }, message: /matches none of the 1 configured signing secret.*exactly as received/ },
    WEBHOOK_BODY_NOT_RAW: { input: { rawBody: payload as unknown as string, headers: d.headers }, message: /already parsed.*express\.json\(\).*bodyParser: false.*Koa: .*Mount payRouter\(pay\)\.routes\(\) before the body parser/ },
    BODY_TOO_LARGE: { input: { rawBody: d.body, headers: d.headers }, message: /larger than 64 bytes.*webhooks\.maxBodyBytes/, options: { webhooks: { maxBodyBytes: 64 } } },
    WEBHOOK_INVALID_JSON: { input: (() => { const s = delivery('{"type": oops'); return { rawBody: s.body, headers: s.headers }; })(), message: /correctly signed but its body is not valid JSON/ },
    WEBHOOK_EVENT_ID_MISMATCH: { input: (() => { const s = delivery({ ...payload, id: 'evt_A' }, { eventId: 'evt_B' }); return { rawBody: s.body, headers: s.headers }; })(), message: /X-Pay-Event-Id "evt_B" is not the id the signed payload carries \("evt_A"\).*webhooks\.payloadEventId/ },
  };
}

describe('every verification failure has its code, its status and a fix', () => {
  for (const [code, { input, message, options }] of Object.entries(failingDeliveries())) {
    it(`${code} → ${ERROR_STATUS[code as WebhookVerificationCode]}`, async () => {
      const { pay } = payWithClock(options);
      const error = await failure(pay.webhooks.verify(input));
      expect(error.code).toBe(code);
      expect(error.name).toBe('WebhookVerificationError');
      expect(error.message).toMatch(message);
      const response = error.toResponse();
      expect(response.status).toBe(ERROR_STATUS[code as WebhookVerificationCode]);
      expect(JSON.parse(response.body as string)).toMatchObject({ error: { code, message: error.message } });

      const safe = await pay.webhooks.verifySafe(input);
      expect(safe).toMatchObject({ ok: false, code });

      // The route answers the same.
      const routed = await post(pay, { body: input.rawBody as string, headers: input.headers as Record<string, string> });
      expect(routed.status).toBe(ERROR_STATUS[code as WebhookVerificationCode]);
      expect(routed.json.error?.code).toBe(code);
    });
  }

  it('names each missing header, and treats an empty event id as missing', async () => {
    const { pay } = payWithClock();
    const d = delivery(payload);
    for (const [name, shown] of [['x-pay-signature', 'X-Pay-Signature'], ['x-pay-timestamp', 'X-Pay-Timestamp'], ['x-pay-event-id', 'X-Pay-Event-Id']] as const) {
      const headers = { ...d.headers };
      delete headers[name];
      const error = await failure(pay.webhooks.verify({ rawBody: d.body, headers }));
      expect(error).toMatchObject({ code: 'WEBHOOK_MISSING_HEADER', details: { header: shown } });
    }
    expect((await failure(pay.webhooks.verify({ rawBody: d.body, headers: { ...d.headers, 'x-pay-event-id': '' } }))).code).toBe('WEBHOOK_MISSING_HEADER');
  });

  it('refuses malformed signatures before computing anything', async () => {
    const { pay } = payWithClock();
    const d = delivery(payload);
    const good = d.headers['x-pay-signature']!;
    for (const bad of ['', good.slice(1), `${good}0`, `sha256=${good}`, ` ${good}`, `${good.slice(0, 63)}g`, `v1,${good}`]) {
      expect((await failure(pay.webhooks.verify({ rawBody: d.body, headers: { ...d.headers, 'x-pay-signature': bad } }))).code).toBe('WEBHOOK_MALFORMED_SIGNATURE');
    }
    for (const bad of ['', '-1717171717', '1717171717.5', '1e9', ' 1717171717', '0x66', '1234567890123456']) {
      expect((await failure(pay.webhooks.verify({ rawBody: d.body, headers: { ...d.headers, 'x-pay-timestamp': bad } }))).code).toBe('WEBHOOK_MALFORMED_TIMESTAMP');
    }
  });

  it('refuses bodies that are not raw: undefined, null, objects, arrays, numbers', async () => {
    const { pay } = payWithClock();
    const d = delivery(payload);
    for (const rawBody of [undefined, null, payload, [payload], 42]) {
      const error = await failure(pay.webhooks.verify({ rawBody: rawBody as unknown as string, headers: d.headers }));
      expect(error.code).toBe('WEBHOOK_BODY_NOT_RAW');
    }
  });

  it('counts a string body in UTF-8 bytes against the limit', async () => {
    const { pay } = payWithClock({ webhooks: { maxBodyBytes: 30 } });
    const exactly30 = `"${'é'.repeat(14)}"`; // 2 + 14 × 2 bytes, 16 UTF-16 units
    const signed = signWebhook({ payload: exactly30, secret: SECRET, timestamp: T0 });
    expect((await pay.webhooks.verify({ rawBody: signed.body, headers: signed.headers })).payload).toBe('é'.repeat(14));
    // Exactly the limit in one byte per character, as text and as bytes: accepted.
    const ascii30 = signWebhook({ payload: `"${'a'.repeat(28)}"`, secret: SECRET, timestamp: T0 });
    for (const rawBody of [ascii30.body as string, Buffer.from(ascii30.body as string)]) {
      expect((await pay.webhooks.verify({ rawBody, headers: ascii30.headers })).payload).toBe('a'.repeat(28));
    }
    const over = signWebhook({ payload: `"${'é'.repeat(14)}x"`, secret: SECRET, timestamp: T0 });
    expect((await failure(pay.webhooks.verify({ rawBody: over.body, headers: over.headers }))).code).toBe('BODY_TOO_LARGE');
    const emoji = signWebhook({ payload: `"${'😀'.repeat(7)}x"`, secret: SECRET, timestamp: T0 }); // 2 + 28 + 1 bytes
    expect((await failure(pay.webhooks.verify({ rawBody: emoji.body, headers: emoji.headers }))).code).toBe('BODY_TOO_LARGE');
    expect((await failure(pay.webhooks.verify({ rawBody: Buffer.alloc(31, 0x20), headers: signed.headers }))).code).toBe('BODY_TOO_LARGE');
  });

  it('checks the signature before the timestamp window: a stale forgery is a mismatch', async () => {
    const { pay } = payWithClock();
    const forged = delivery(payload, { timestamp: T0 - 10_000, secret: 'whsec_attacker' });
    expect((await failure(pay.webhooks.verify({ rawBody: forged.body, headers: forged.headers }))).code).toBe('WEBHOOK_SIGNATURE_MISMATCH');
  });
});

describe('the signing secret never leaks', () => {
  it('appears in no error message, JSON.stringify, util.inspect, response or log line', async () => {
    const secret = 'whsec_SUPER_SECRET_d41d8cd98f00b204';
    const logger = captureLogger();
    const pay = createPay({ payment: { apiUrl: 'http://127.0.0.1:9', merchantId: 'm', apiKey: 'k', webhookSecret: [secret, `${secret}_next`] }, env: {}, logger, now: () => T0 * 1000, webhooks: { maxBodyBytes: 4096 } });
    const ts = String(T0);
    const body = JSON.stringify(payload);
    const sig = computeSignature(secret, ts, body);
    const base = { 'x-pay-signature': sig, 'x-pay-timestamp': ts, 'x-pay-event-id': 'evt_s' };
    const inputs: VerifyInput[] = [
      { rawBody: body, headers: {} },
      { rawBody: body, headers: { ...base, 'x-pay-signature': 'zz' } },
      { rawBody: body, headers: { ...base, 'x-pay-timestamp': 'now' } },
      { rawBody: body, headers: { ...base, 'x-pay-timestamp': String(T0 - 400), 'x-pay-signature': computeSignature(secret, String(T0 - 400), body) } },
      { rawBody: body, headers: { ...base, 'x-pay-timestamp': String(T0 * 1000), 'x-pay-signature': computeSignature(secret, String(T0 * 1000), body) } },
      { rawBody: `${body} `, headers: base },
      { rawBody: payload as unknown as string, headers: base },
      { rawBody: 'x'.repeat(5000), headers: base },
      { rawBody: '{', headers: { ...base, 'x-pay-signature': computeSignature(secret, ts, '{') } },
    ];
    const seen = new Set<string>();
    for (const input of inputs) {
      const result = await pay.webhooks.verifySafe(input);
      if (result.ok) throw new Error('expected a failure');
      seen.add(result.code);
      const { error } = result;
      for (const text of [error.message, error.stack ?? '', JSON.stringify(error), inspect(error, { depth: 10, showHidden: true }), JSON.stringify(error.toResponse()), inspect(result, { depth: 10 })]) {
        expect(text).not.toContain(secret);
        expect(text).not.toContain('SUPER_SECRET');
      }
      const answer = await post(pay, { body: input.rawBody as string, headers: input.headers as Record<string, string> });
      // The route refused it too, and said so in a body we can read.
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.json.error?.code).toEqual(expect.any(String));
      const bodyText = typeof answer.body === 'string' ? answer.body : Buffer.from(answer.body).toString('utf8');
      for (const text of [bodyText, JSON.stringify({ ...answer, body: bodyText }), inspect(answer, { depth: 10 })]) {
        expect(text).not.toContain(secret);
        expect(text).not.toContain('SUPER_SECRET');
      }
    }
    expect(seen.size).toBe(inputs.length);
    // The log check below must not pass on an empty log: the refusals were logged.
    expect(logger.lines.length).toBeGreaterThan(0);
    for (const text of [inspect(pay, { depth: 10, showHidden: true }), JSON.stringify(pay), inspect(pay.webhooks, { depth: 10, showHidden: true }), logger.text()]) {
      expect(text).not.toContain('SUPER_SECRET');
    }
  });
});

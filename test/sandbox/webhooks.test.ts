import { afterEach, describe, expect, it } from 'vitest';
import { computeSignature } from '../../src/core/webhooks/signature.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { call, mint, payByCard, startReceiver, statusOf } from './helpers.js';

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanup.length > 0) await cleanup.pop()!();
});

async function setup(statuses: Parameters<typeof startReceiver>[0] = [], options: Parameters<typeof startSandbox>[0] = {}) {
  const receiver = await startReceiver(statuses);
  cleanup.push(receiver.close);
  const sb = await startSandbox({ webhookUrl: receiver.url, webhookRetry: { baseDelayMs: 10 }, ...options });
  cleanup.push(() => sb.close());
  return { sb, receiver };
}

async function payByBank(sb: Sandbox) {
  const token = await mint(sb);
  return call(`${sb.paymentUrl}/api/v1/checkout`, { body: { widget_token: token, method: 'pay_by_bank', return_url: 'https://shop.example/return' } });
}

describe('sandbox: pay by bank', () => {
  it('stays pending until approved; approval arrives as a signed webhook', async () => {
    const clock = Date.UTC(2030, 5, 1, 8, 0, 0);
    const { sb, receiver } = await setup([], { now: () => clock });
    const res = await payByBank(sb);
    expect(res.status).toBe(201);
    const { payment_id: id, redirect_url: redirect, payment_client_token: pct } = res.json;
    expect(redirect).toBe(`${sb.paymentUrl}/sandbox/bank/${id}`);
    expect((await call(redirect)).text).toContain('Approve');
    expect((await statusOf(sb, id, pct)).json.status).toBe('pending');
    await sb.webhooks.idle();
    expect(receiver.received).toHaveLength(0);

    const approve = await call(`${redirect}/approve`, { method: 'POST' });
    expect(approve.json).toEqual({ payment_id: id, status: 'succeeded' });
    await sb.webhooks.idle();
    expect(receiver.received).toHaveLength(1);
    const [delivery] = receiver.received;
    const timestamp = delivery!.headers['x-pay-timestamp'] as string;
    expect(timestamp).toBe(String(clock / 1000));
    expect(delivery!.headers['content-type']).toBe('application/json');
    expect(delivery!.headers['x-pay-signature']).toBe(computeSignature(sb.webhookSecret, timestamp, delivery!.body));
    expect(delivery!.headers['x-pay-signature']).not.toBe(computeSignature('whsec_other', timestamp, delivery!.body));
    const event = JSON.parse(delivery!.body);
    expect(delivery!.headers['x-pay-event-id']).toBe(event.id);
    expect(event).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: 'payment.succeeded',
      created: clock / 1000,
      data: { payment_id: id, status: 'succeeded', order_id: 'order-1001', amount: 1999, currency: 'EUR' },
    });
    expect(sb.webhooks.delivered).toEqual([expect.objectContaining({ eventId: event.id, status: 200, attempt: 1, copy: 0, ok: true })]);
  });

  it('a bank decline sends payment.failed; an abandoned payment stays pending with no webhook', async () => {
    const { sb, receiver } = await setup();
    const declined = await payByBank(sb);
    const abandoned = await payByBank(sb);
    await call(`${declined.json.redirect_url}/decline`, { body: 'x=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    await sb.webhooks.idle();
    expect(receiver.received.map((r) => JSON.parse(r.body).type)).toEqual(['payment.failed']);
    expect(sb.payments.get(abandoned.json.payment_id)?.status).toBe('pending');
    const twice = await call(`${declined.json.redirect_url}/approve`, { method: 'POST' });
    expect([twice.status, twice.json.error.code]).toEqual([409, 'invalid_state']);
  });

  it('validates the checkout body and merchant eligibility', async () => {
    const { sb } = await setup();
    const token = await mint(sb);
    const url = `${sb.paymentUrl}/api/v1/checkout`;
    const neither = await call(url, { body: { widget_token: token } });
    expect([neither.status, neither.json.error.message]).toEqual([422, expect.stringContaining('saved_payment_method_id')]);
    const noReturn = await call(url, { body: { widget_token: token, method: 'pay_by_bank', return_url: 'not a url' } });
    expect([noReturn.status, noReturn.json.error.message]).toEqual([422, expect.stringContaining('return_url')]);
    const ineligible = await startSandbox({ payByBankEligible: false });
    cleanup.push(() => ineligible.close());
    const res = await call(`${ineligible.paymentUrl}/api/v1/checkout`, {
      body: { widget_token: await mint(ineligible), method: 'pay_by_bank', return_url: 'https://shop.example/return' },
    });
    expect([res.status, res.json.error.code]).toEqual([403, 'pay_by_bank_unavailable']);
  });
});

describe('sandbox: webhook delivery', () => {
  it('retries a 500 from the receiver with backoff, same event id and body', async () => {
    const { sb, receiver } = await setup([500, 503]);
    await payByCard(sb, sb.testCards.succeeds);
    await sb.webhooks.idle();
    expect(sb.webhooks.delivered.map((d) => [d.attempt, d.status, d.ok])).toEqual([
      [1, 500, false],
      [2, 503, false],
      [3, 200, true],
    ]);
    expect(new Set(receiver.received.map((r) => r.headers['x-pay-event-id'])).size).toBe(1);
    expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1);
    for (const r of receiver.received) {
      expect(r.headers['x-pay-signature']).toBe(computeSignature(sb.webhookSecret, r.headers['x-pay-timestamp'] as string, r.body));
    }
  });

  it('gives up after the configured attempts; network errors are recorded with status null', async () => {
    const { sb } = await setup([500, 500, 500], { webhookRetry: { attempts: 2, baseDelayMs: 5 } });
    await payByCard(sb, sb.testCards.declines);
    await sb.webhooks.idle();
    expect(sb.webhooks.delivered.map((d) => [d.type, d.status])).toEqual([
      ['payment.failed', 500],
      ['payment.failed', 500],
    ]);
    const receiver = await startReceiver();
    await receiver.close();
    sb.setWebhookUrl(receiver.url); // nothing listens there any more
    await payByCard(sb, sb.testCards.declines);
    await sb.webhooks.idle();
    expect(sb.webhooks.delivered.slice(2)).toEqual([
      expect.objectContaining({ status: null, ok: false, attempt: 1, error: expect.any(String) }),
      expect.objectContaining({ status: null, ok: false, attempt: 2 }),
    ]);
  });

  it('duplicateWebhooks sends extra copies with the same event id and body', async () => {
    const { sb, receiver } = await setup([], { duplicateWebhooks: 2 });
    await payByCard(sb, sb.testCards.succeeds);
    await sb.webhooks.idle();
    expect(receiver.received).toHaveLength(3);
    expect(new Set(receiver.received.map((r) => r.headers['x-pay-event-id'])).size).toBe(1);
    expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1);
    expect(sb.webhooks.delivered.map((d) => d.copy).sort()).toEqual([0, 1, 2]);
    expect(sb.webhooks.events).toHaveLength(1);
  });

  it('records events without a webhook URL, and setStatus sends one for a terminal status', async () => {
    const sb = await startSandbox();
    cleanup.push(() => sb.close());
    const res = await payByCard(sb, sb.testCards.succeeds);
    await sb.webhooks.idle();
    expect(sb.webhooks.events.map((e) => e.type)).toEqual(['payment.succeeded']);
    expect(sb.webhooks.delivered).toEqual([]);
    const receiver = await startReceiver();
    cleanup.push(receiver.close);
    sb.setWebhookUrl(receiver.url);
    sb.payments.setStatus(res.json.payment_id, 'canceled');
    await sb.webhooks.idle();
    expect(receiver.received.map((r) => JSON.parse(r.body).data)).toEqual([expect.objectContaining({ payment_id: res.json.payment_id, status: 'canceled' })]);
    expect(() => sb.setWebhookUrl('ftp://example.com/')).toThrow(TypeError);
    // Not a URL at all: named, with what one looks like (it said only "Invalid URL").
    expect(() => sb.setWebhookUrl('not a url')).toThrow(/^webhookUrl must be an http:\/\/ URL where your app receives webhooks, such as http:\/\/127\.0\.0\.1:3000\/pay\/webhooks \(got "not a url"\)$/);
    // 0 would mean "no time-out" to node:http: a receiver that never answers would hold its delivery for ever.
    await expect(startSandbox({ webhookRetry: { timeoutMs: 0 } })).rejects.toThrow(/webhookRetry\.timeoutMs must be above 0/);
    // Infinity reads as "no time-out", but every delivery then failed as an unhandled RangeError from node:http.
    await expect(startSandbox({ webhookRetry: { timeoutMs: Infinity } })).rejects.toThrow(/webhookRetry\.timeoutMs must be at most 2147483647 ms/);
    await expect(startSandbox({ webhookRetry: { baseDelayMs: 3_000_000_000 } })).rejects.toThrow(/webhookRetry\.baseDelayMs must be at most 2147483647 ms/);
  });

  it('close() cancels pending retries promptly', async () => {
    const { sb, receiver } = await setup([500, 500, 500, 500, 500], { webhookRetry: { attempts: 5, baseDelayMs: 60_000 } });
    await payByCard(sb, sb.testCards.succeeds);
    // The first attempt has been answered (500), so a retry is now pending, 60 s away.
    const deadline = Date.now() + 10_000;
    while (sb.webhooks.delivered.length < 1) {
      if (Date.now() > deadline) throw new Error('timed out waiting for the first webhook attempt');
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(sb.webhooks.delivered).toMatchObject([{ attempt: 1, status: 500, ok: false }]);
    const started = Date.now();
    await sb.close();
    await sb.webhooks.idle();
    // Not a speed check: it guards that close() cancels the retry instead of waiting out its 60 s delay.
    // Closing takes a few ms; 10 s is far above that and far below the delay.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(sb.webhooks.delivered).toHaveLength(1);
    expect(receiver.received).toHaveLength(1);
  });
});

describe('sandbox: what the receiver answered', () => {
  it('is kept with each delivery, cut at 2 KiB, so a test sees why its app refused one', async () => {
    const refusal = '{"error":{"code":"WEBHOOK_TIMESTAMP_IN_FUTURE","message":"signed 960 s in the future"}}';
    const { sb } = await setup([{ status: 400, body: refusal }, { status: 500, body: 'x'.repeat(5000) }]);
    expect((await payByCard(sb, sb.testCards.succeeds)).status).toBe(201);
    await sb.webhooks.idle();
    const [first, second, third] = sb.webhooks.delivered;
    expect([first!.status, first!.answer]).toEqual([400, refusal]);
    expect([second!.status, second!.answer!.length]).toEqual([500, 2048]);
    expect([third!.status, third!.ok, third!.answer]).toEqual([200, true, '']);
  });
});

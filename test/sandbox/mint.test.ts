import { afterEach, describe, expect, it } from 'vitest';
import { inspect } from 'node:util';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { call, card, merchantHeaders, mint, ORDER } from './helpers.js';

let sb: Sandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

describe('sandbox: POST /api/v1/checkout/init', () => {
  it('mints a single-use wt_ token valid for 15 minutes by the injected clock', async () => {
    const t0 = Date.UTC(2030, 0, 1, 12, 0, 0);
    sb = await startSandbox({ now: () => t0 });
    const res = await call(`${sb.paymentUrl}/api/v1/checkout/init`, { body: ORDER, headers: merchantHeaders(sb) });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.json.widget_token).toMatch(/^wt_[0-9a-f]{32}$/);
    expect(res.json.expires_at).toBe('2030-01-01T12:15:00.000Z');
  });

  it('generates sandbox credentials unless given, and keeps secrets out of inspect and JSON', async () => {
    sb = await startSandbox();
    expect(sb.paymentUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(sb.merchantId).toBe('merchant_sandbox');
    expect(sb.apiKey).toMatch(/^sk_test_[0-9a-f]{32}$/);
    expect(sb.webhookSecret).toMatch(/^whsec_[0-9a-f]+$/);
    expect(inspect(sb)).not.toContain(sb.apiKey);
    expect(JSON.stringify(sb)).not.toContain(sb.webhookSecret);
    const custom = await startSandbox({ merchantId: 'm_1', apiKey: 'sk_test_x', webhookSecret: 'whsec_y' });
    try {
      expect([custom.merchantId, custom.apiKey, custom.webhookSecret]).toEqual(['m_1', 'sk_test_x', 'whsec_y']);
      expect(custom.paymentUrl).not.toBe(sb.paymentUrl);
    } finally {
      await custom.close();
    }
  });

  it.each<[string, (s: Sandbox) => Record<string, string>]>([
    ['no credentials', () => ({})],
    ['a wrong key', (s) => ({ 'x-merchant-id': s.merchantId, 'x-merchant-api-key': 'sk_test_wrong' })],
    ['a wrong merchant id', (s) => ({ 'x-merchant-id': 'someone_else', 'x-merchant-api-key': s.apiKey })],
    ['only the merchant id', (s) => ({ 'x-merchant-id': s.merchantId })],
  ])('refuses %s with 401 invalid_credentials', async (_name, headers) => {
    sb = await startSandbox();
    const res = await call(`${sb.paymentUrl}/api/v1/checkout/init`, { body: ORDER, headers: headers(sb) });
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ error: { code: 'invalid_credentials', message: expect.any(String) } });
  });

  it.each([
    ['amount', { amount: undefined }],
    ['amount', { amount: 0 }],
    ['amount', { amount: -5 }],
    ['amount', { amount: 19.99 }],
    ['amount', { amount: '1999' }],
    ['amount', { amount: Number.MAX_SAFE_INTEGER + 1 }],
    ['currency', { currency: 'eur' }],
    ['currency', { currency: 'EURO' }],
    ['currency', { currency: undefined }],
    ['order_id', { order_id: '' }],
    ['order_id', { order_id: 42 }],
    ['order_id', { order_id: undefined }],
  ])('refuses an invalid %s with 422 invalid_request naming it (%o)', async (field, change) => {
    sb = await startSandbox();
    const res = await call(`${sb.paymentUrl}/api/v1/checkout/init`, { body: { ...ORDER, ...change }, headers: merchantHeaders(sb) });
    expect(res.status).toBe(422);
    expect(res.json.error.code).toBe('invalid_request');
    expect(res.json.error.message).toContain(field);
  });

  it('refuses malformed JSON with 400 invalid_json, a non-object with 422, and a non-JSON media type with 415', async () => {
    sb = await startSandbox();
    const url = `${sb.paymentUrl}/api/v1/checkout/init`;
    const bad = await call(url, { body: '{"amount": 1999,', headers: merchantHeaders(sb) });
    expect([bad.status, bad.json.error.code]).toEqual([400, 'invalid_json']);
    const array = await call(url, { body: '[1,2]', headers: merchantHeaders(sb) });
    expect([array.status, array.json.error.code]).toEqual([422, 'invalid_request']);
    const text = await call(url, { body: JSON.stringify(ORDER), headers: { ...merchantHeaders(sb), 'content-type': 'text/plain' } });
    expect([text.status, text.json.error.code]).toEqual([415, 'unsupported_media_type']);
  });

  it('checks credentials before the body', async () => {
    sb = await startSandbox();
    const res = await call(`${sb.paymentUrl}/api/v1/checkout/init`, { body: '{oops' });
    expect(res.status).toBe(401);
  });

  it('answers unknown routes 404 not_found and wrong methods 405 with Allow', async () => {
    sb = await startSandbox();
    const missing = await call(`${sb.paymentUrl}/api/v1/nothing`);
    expect([missing.status, missing.json.error.code]).toEqual([404, 'not_found']);
    const wrong = await call(`${sb.paymentUrl}/api/v1/checkout/init`);
    expect([wrong.status, wrong.json.error.code, wrong.headers.get('allow')]).toEqual([405, 'method_not_allowed', 'POST']);
  });
});

describe('sandbox: widget token expiry', () => {
  it('a token is usable until 15 minutes after minting, then 410 token_expired', async () => {
    let clock = Date.UTC(2030, 0, 1);
    sb = await startSandbox({ now: () => clock });
    const token = await mint(sb);
    const lookup = () => call(`${sb!.paymentUrl}/api/v1/checkout/lookup`, { body: { widget_token: token } });
    clock += 15 * 60 * 1000 - 1;
    expect((await lookup()).status).toBe(200);
    clock += 1;
    const expired = await lookup();
    expect([expired.status, expired.json.error.code]).toEqual([410, 'token_expired']);
    const pay = await call(`${sb.paymentUrl}/api/v1/mobile/checkout`, { body: { widget_token: token, card: card(sb.testCards.succeeds) } });
    expect(pay.status).toBe(410);
    expect(sb.payments.list()).toHaveLength(0);
  });
});

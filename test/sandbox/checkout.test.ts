import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { call, card, merchantHeaders, mint, ORDER, payByCard, statusOf } from './helpers.js';

let sb: Sandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

const lookup = (s: Sandbox, body: Record<string, unknown>, headers?: Record<string, string>) =>
  call(`${s.paymentUrl}/api/v1/checkout/lookup`, { body, headers });

describe('sandbox: lookup', () => {
  it('reads the order and card fields without spending the token; Bearer works too', async () => {
    sb = await startSandbox();
    const token = await mint(sb);
    const first = await lookup(sb, { widget_token: token });
    expect(first.status).toBe(200);
    expect(first.json.order).toEqual({ order_id: 'order-1001', amount: 1999, currency: 'EUR' });
    expect(first.json.card_fields.accepted_brands).toContain('visa');
    expect(first.json.saved_cards).toEqual([]);
    expect(first.json.pay_by_bank).toEqual({ eligible: true });
    const again = await lookup(sb, {}, { authorization: `Bearer ${token}` });
    expect(again.status).toBe(200);
    const pay = await call(`${sb.paymentUrl}/api/v1/mobile/checkout`, { body: { widget_token: token, card: card(sb.testCards.succeeds) } });
    expect(pay.status).toBe(201);
  });

  it('lists the saved cards of shopper@example.com only', async () => {
    sb = await startSandbox({ payByBankEligible: false });
    const token = await mint(sb);
    const shopper = await lookup(sb, { widget_token: token, customer_email: ' Shopper@Example.com ' });
    expect(shopper.json.saved_cards.map((c: { id: string }) => c.id)).toEqual(sb.testShopper.savedPaymentMethodIds);
    expect(shopper.json.saved_cards).toHaveLength(2);
    expect(shopper.json.saved_cards[0]).toMatchObject({ brand: 'visa', last4: '4242', is_default: true });
    expect(shopper.json.pay_by_bank.eligible).toBe(false);
    const stranger = await lookup(sb, { widget_token: token, customer_email: 'nobody@example.com' });
    expect(stranger.json.saved_cards).toEqual([]);
  });

  it('refuses a missing or unknown token with 401 invalid_token', async () => {
    sb = await startSandbox();
    for (const body of [{}, { widget_token: 'wt_00000000000000000000000000000000' }]) {
      const res = await lookup(sb, body);
      expect([res.status, res.json.error.code]).toEqual([401, 'invalid_token']);
    }
  });
});

describe('sandbox: new card (mobile checkout)', () => {
  it('spends the token: a second use is 409 token_spent, lookup too', async () => {
    sb = await startSandbox();
    const token = await mint(sb);
    const body = { widget_token: token, card: card(sb.testCards.succeeds) };
    const first = await call(`${sb.paymentUrl}/api/v1/mobile/checkout`, { body });
    expect(first.status).toBe(201);
    const second = await call(`${sb.paymentUrl}/api/v1/mobile/checkout`, { body });
    expect([second.status, second.json.error.code]).toEqual([409, 'token_spent']);
    expect((await lookup(sb, { widget_token: token })).status).toBe(409);
    expect(sb.payments.list()).toHaveLength(1);
  });

  it('the succeeding card confirms: status succeeded, no next action', async () => {
    sb = await startSandbox();
    const res = await payByCard(sb, sb.testCards.succeeds);
    expect(res.json.payment_id).toMatch(/^pay_/);
    expect(res.json.payment_client_token).toMatch(/^pct_/);
    expect(res.json.provider_params.client_secret).toMatch(new RegExp(`^${res.json.payment_id}_secret_`));
    expect(res.json.provider_params.next_action).toBeNull();
    const status = await statusOf(sb, res.json.payment_id, res.json.payment_client_token);
    expect(status.json).toEqual({ payment_id: res.json.payment_id, status: 'succeeded', amount: 1999, currency: 'EUR', order_id: 'order-1001' });
  });

  it('the declining card ends declined with a decline_code', async () => {
    sb = await startSandbox();
    const res = await payByCard(sb, sb.testCards.declines);
    expect(res.status).toBe(201);
    const status = await statusOf(sb, res.json.payment_id, res.json.payment_client_token);
    expect(status.json).toMatchObject({ status: 'declined', decline_code: 'generic_decline' });
  });

  it('the 3DS card requires action until the challenge passes (or fails)', async () => {
    sb = await startSandbox();
    const res = await payByCard(sb, sb.testCards.requires3ds);
    const { payment_id: id, payment_client_token: pct } = res.json;
    expect(res.json.provider_params.next_action).toEqual({ type: 'three_d_secure', url: `${sb.paymentUrl}/sandbox/payments/${id}/3ds` });
    expect((await statusOf(sb, id, pct)).json.status).toBe('requires_action');
    const page = await call(res.json.provider_params.next_action.url);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const pass = await call(res.json.provider_params.next_action.url, { body: { result: 'pass' } });
    expect(pass.json).toEqual({ payment_id: id, status: 'succeeded' });
    expect((await statusOf(sb, id, pct)).json.status).toBe('succeeded');
    const again = await call(res.json.provider_params.next_action.url, { body: { result: 'pass' } });
    expect([again.status, again.json.error.code]).toEqual([409, 'invalid_state']);

    const failing = await payByCard(sb, sb.testCards.requires3ds);
    const fail = await call(failing.json.provider_params.next_action.url, { body: 'result=fail', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(fail.text).toContain('declined');
    expect(sb.payments.get(failing.json.payment_id)).toMatchObject({ status: 'declined', declineCode: 'authentication_failed' });
  });

  it('an unknown (Luhn-valid) card number is declined with unknown_test_card', async () => {
    sb = await startSandbox();
    const res = await payByCard(sb, '5555555555554444');
    expect(sb.payments.get(res.json.payment_id)).toMatchObject({ status: 'declined', declineCode: 'unknown_test_card', cardLast4: '4444' });
  });

  it.each([
    ['card', undefined],
    ['card.number', { number: '4242' }],
    ['card.number', { number: '4242424242424241' }],
    ['card.exp_month', { exp_month: 13 }],
    ['card.exp_year', { exp_year: 2001 }],
    ['card.cvc', { cvc: '12' }],
  ])('refuses an invalid %s with 422 and leaves the token unspent', async (field, change) => {
    sb = await startSandbox();
    const token = await mint(sb);
    const bad = change === undefined ? undefined : card(sb.testCards.succeeds, change);
    const res = await call(`${sb.paymentUrl}/api/v1/mobile/checkout`, { body: { widget_token: token, card: bad } });
    expect([res.status, res.json.error.code]).toEqual([422, 'invalid_request']);
    expect(res.json.error.message).toContain(field);
    expect((await lookup(sb, { widget_token: token })).status).toBe(200);
  });
});

describe('sandbox: saved cards', () => {
  async function shopperToken(s: Sandbox): Promise<string> {
    const token = await mint(s);
    await lookup(s, { widget_token: token, customer_email: 'shopper@example.com' });
    return token;
  }

  it('pays off-session with a saved card: succeeded, no client secret, token spent', async () => {
    sb = await startSandbox();
    const token = await shopperToken(sb);
    const id = sb.testShopper.savedPaymentMethodIds[1]!;
    const res = await call(`${sb.paymentUrl}/api/v1/checkout`, { body: { widget_token: token, saved_payment_method_id: id } });
    expect(res.status).toBe(201);
    expect(res.json).toEqual({ payment_id: expect.stringMatching(/^pay_/), status: 'succeeded', payment_client_token: expect.stringMatching(/^pct_/) });
    expect(sb.payments.get(res.json.payment_id)).toMatchObject({ method: 'saved_card', savedPaymentMethodId: id, cardLast4: '4444' });
    const again = await call(`${sb.paymentUrl}/api/v1/checkout`, { body: { widget_token: token, saved_payment_method_id: id } });
    expect(again.status).toBe(409);
  });

  it('refuses a saved card the token’s shopper does not have with 404 payment_method_not_found', async () => {
    sb = await startSandbox();
    const anonymous = await mint(sb);
    const res = await call(`${sb.paymentUrl}/api/v1/checkout`, { body: { widget_token: anonymous, saved_payment_method_id: sb.testShopper.savedPaymentMethodIds[0] } });
    expect([res.status, res.json.error.code]).toEqual([404, 'payment_method_not_found']);
    expect((await lookup(sb, { widget_token: anonymous })).status).toBe(200);
  });

  it('set-default and delete answer the updated list; unknown ids are 404', async () => {
    sb = await startSandbox();
    const token = await shopperToken(sb);
    const [visa, mastercard] = sb.testShopper.savedPaymentMethodIds as [string, string];
    const auth = { authorization: `Bearer ${token}` };
    const setDefault = await call(`${sb.paymentUrl}/api/v1/payment-methods/${mastercard}/set-default`, { method: 'POST', headers: auth });
    expect(setDefault.status).toBe(200);
    expect(setDefault.json.saved_cards.map((c: { id: string; is_default: boolean }) => [c.id, c.is_default])).toEqual([
      [visa, false],
      [mastercard, true],
    ]);
    const removed = await call(`${sb.paymentUrl}/api/v1/saved-payment-methods/${mastercard}`, { method: 'DELETE', body: { widget_token: token } });
    expect(removed.json.saved_cards).toEqual([expect.objectContaining({ id: visa, is_default: true })]);
    const unknown = await call(`${sb.paymentUrl}/api/v1/saved-payment-methods/${mastercard}`, { method: 'DELETE', headers: auth });
    expect([unknown.status, unknown.json.error.code]).toEqual([404, 'payment_method_not_found']);
    expect((await lookup(sb, { widget_token: token, customer_email: 'shopper@example.com' })).json.saved_cards).toHaveLength(1);
  });
});

describe('sandbox: status endpoint authentication', () => {
  it('accepts the payment client token or the merchant credentials, nothing else', async () => {
    sb = await startSandbox();
    const a = await payByCard(sb, sb.testCards.succeeds);
    const b = await payByCard(sb, sb.testCards.succeeds);
    const url = `${sb.paymentUrl}/api/v1/payments/${a.json.payment_id}/status`;
    expect((await statusOf(sb, a.json.payment_id, a.json.payment_client_token)).status).toBe(200);
    const otherToken = await statusOf(sb, a.json.payment_id, b.json.payment_client_token);
    expect([otherToken.status, otherToken.json.error.code]).toEqual([401, 'invalid_token']);
    const none = await call(url);
    expect([none.status, none.json.error.code]).toEqual([401, 'invalid_credentials']);
    const wrongKey = await call(url, { headers: { ...merchantHeaders(sb), 'x-merchant-api-key': 'nope' } });
    expect(wrongKey.status).toBe(401);
    const merchant = await call(url, { headers: merchantHeaders(sb) });
    expect([merchant.status, merchant.json.status]).toEqual([200, 'succeeded']);
    const unknown = await call(`${sb.paymentUrl}/api/v1/payments/pay_missing/status`, { headers: merchantHeaders(sb) });
    expect([unknown.status, unknown.json.error.code]).toEqual([404, 'payment_not_found']);
  });
});

describe('sandbox: delayed confirmation', () => {
  it('confirmDelayMs keeps a succeeding payment processing for that long', async () => {
    sb = await startSandbox({ confirmDelayMs: 600 });
    const started = Date.now();
    const res = await payByCard(sb, sb.testCards.succeeds);
    expect((await statusOf(sb, res.json.payment_id, res.json.payment_client_token)).json.status).toBe('processing');
    while (sb.payments.get(res.json.payment_id)?.status === 'processing' && Date.now() - started < 5000) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(sb.payments.get(res.json.payment_id)?.status).toBe('succeeded');
    expect(Date.now() - started).toBeGreaterThanOrEqual(590);
  });

  it('setConfirmDelay(Infinity) never confirms on its own, nor does a delay past what a timer holds; setStatus does', async () => {
    sb = await startSandbox();
    sb.payments.setConfirmDelay(2 ** 31); // Node would fire a timer this long after 1 ms
    const long = await payByCard(sb, sb.testCards.succeeds);
    sb.payments.setConfirmDelay(Infinity);
    const res = await payByCard(sb, sb.testCards.succeeds);
    await new Promise((r) => setTimeout(r, 50));
    expect(sb.payments.get(long.json.payment_id)?.status).toBe('processing');
    expect(sb.payments.get(res.json.payment_id)?.status).toBe('processing');
    sb.payments.setStatus(res.json.payment_id, 'succeeded');
    expect((await statusOf(sb, res.json.payment_id, res.json.payment_client_token)).json.status).toBe('succeeded');
    expect(() => sb!.payments.setStatus('pay_missing', 'canceled')).toThrow();
  });

  it('POST /sandbox/payments/{id}/status forces a status from another process', async () => {
    sb = await startSandbox();
    const res = await payByCard(sb, sb.testCards.requires3ds);
    const url = `${sb.paymentUrl}/sandbox/payments/${res.json.payment_id}/status`;
    const bad = await call(url, { body: { status: 'paid' } });
    expect([bad.status, bad.json.error.code]).toEqual([422, 'invalid_request']);
    const forced = await call(url, { body: { status: 'canceled' } });
    expect(forced.json).toEqual({ payment_id: res.json.payment_id, status: 'canceled' });
    expect((await statusOf(sb, res.json.payment_id, res.json.payment_client_token)).json.status).toBe('canceled');
    expect(sb.webhooks.events.map((e) => e.type)).toEqual(['payment.canceled']);
  });

  it('payments.get returns a snapshot the test cannot change', async () => {
    sb = await startSandbox();
    const res = await payByCard(sb, sb.testCards.succeeds);
    const snapshot = sb.payments.get(res.json.payment_id)!;
    expect(snapshot.amount).toBe(ORDER.amount);
    expect(() => {
      (snapshot as { status: string }).status = 'canceled';
    }).toThrow(TypeError);
    expect(sb.payments.get(res.json.payment_id)?.status).toBe('succeeded');
  });
});

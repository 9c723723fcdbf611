import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPay, type Pay, type PayOptions } from 'paywidget-server';
import type { Sandbox } from 'paywidget-server/sandbox';
import { captureLogger } from '../../helpers/capture-logger.js';
import { commerceSandbox, FAST_HTTP, payFor } from './helpers.js';

let sb: Sandbox;
let pay: Pay;
beforeAll(async () => {
  sb = await commerceSandbox({ orders: 60 });
  pay = payFor(sb);
});
afterAll(() => sb.close());

async function mintFor(p: Pay, body: unknown) {
  const response = await p.handle({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json' }, rawBody: JSON.stringify(body) });
  if (!response) throw new Error('no route answered');
  return { status: response.status, json: JSON.parse(String(response.body)) };
}

/** What the payment service holds for a widget token. */
async function minted(token: string) {
  const res = await fetch(`${sb.paymentUrl}/api/v1/checkout/lookup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ widget_token: token }) });
  return ((await res.json()) as { order: { order_id: string; amount: number; currency: string } }).order;
}

describe('POST /widget-token from a commerce order', () => {
  it.each([
    ['JPY', 12_345, 12_345],
    ['EUR', 27.06, 2_706],
    ['EUR', 19.99, 1_999],
    ['KWD', 12.345, 12_345],
    ['KWD', 1.5, 1_500],
    ['USD', 165, 16_500],
  ])('mints %s %s as %i minor units under the increment_id', async (currency, total, minor) => {
    const order = sb.commerce.addOrder({ state: 'new', status: 'pending', order_currency_code: currency, grand_total: total, total_due: total });
    const res = await mintFor(pay, { order_id: order.entity_id });
    expect(res.status).toBe(200);
    expect(res.json.widget_token).toMatch(/^wt_/);
    expect(await minted(res.json.widget_token)).toEqual({ order_id: order.increment_id, amount: minor, currency });
  });

  it('refuses a grand_total past 15 significant digits (502): as a JSON number it may not be the total the platform holds', async () => {
    const order = sb.commerce.addOrder({ state: 'new', status: 'pending', order_currency_code: 'EUR', grand_total: JSON.parse('80000000000000.01') as number, total_due: 19.99 });
    const logger = captureLogger();
    const res = await mintFor(payFor(sb, { logger }), { order_id: order.entity_id });
    expect(res).toMatchObject({ status: 502, json: { error: { code: 'UPSTREAM_INVALID_RESPONSE' } } });
    // The shopper is told the cost could not be read; the log says why.
    expect(logger.text()).toMatch(/80000000000000\.02 EUR is 8000000000000002 minor units: more significant digits than a JavaScript number keeps exactly/);
  });

  it('accepts pending_payment and the id as a string', async () => {
    const order = sb.commerce.addOrder({ state: 'pending_payment', status: 'pending_payment', order_currency_code: 'EUR', grand_total: 10, total_due: 10 });
    expect((await mintFor(pay, { order_id: String(order.entity_id) })).status).toBe(200);
  });

  it('mints the generated unpaid orders for their grand_total', async () => {
    const pending = Array.from({ length: 60 }, (_, i) => sb.commerce.order(i + 1)!).filter((o) => o.state === 'new').slice(0, 6);
    expect(pending.length).toBeGreaterThan(2);
    for (const order of pending) {
      const res = await mintFor(pay, { order_id: order.entity_id });
      const { amount, currency } = await minted(res.json.widget_token);
      expect(currency).toBe(order.order_currency_code);
      expect(amount / 10 ** ({ JPY: 0, KWD: 3 }[currency] ?? 2)).toBeCloseTo(order.grand_total as number, 6);
    }
  });

  it.each([
    ['a processing (paid) order', { state: 'processing', status: 'processing', total_paid: 20, total_due: 0 }, /processing/],
    ['a complete order', { state: 'complete', status: 'complete' }, /complete/],
    ['a canceled order', { state: 'canceled', status: 'canceled' }, /canceled/],
    ['a new order already partly paid', { state: 'new', status: 'pending', total_paid: 5 }, /already paid/],
    ['a new order with one cent of it paid', { state: 'new', status: 'pending', total_paid: 0.01 }, /0.01 EUR of it is already paid/],
    ['a new order with nothing due', { state: 'new', status: 'pending', total_due: 0 }, /nothing is due/],
    ['a new order of 0', { state: 'new', status: 'pending', grand_total: 0, total_due: 0 }, /nothing is due|grand_total is 0/],
  ])('refuses %s with 409 ORDER_NOT_PAYABLE', async (_name, patch, reason) => {
    const order = sb.commerce.addOrder({ order_currency_code: 'EUR', grand_total: 20, total_due: 20, ...patch });
    const res = await mintFor(pay, { order_id: order.entity_id });
    expect(res.status).toBe(409);
    expect(res.json.error.code).toBe('ORDER_NOT_PAYABLE');
    expect(res.json.error.message).toMatch(reason);
  });

  it('answers 404 ORDER_NOT_FOUND for an unknown order and 400 without an order_id', async () => {
    expect(await mintFor(pay, { order_id: 424_242 })).toMatchObject({ status: 404, json: { error: { code: 'ORDER_NOT_FOUND' } } });
    expect(await mintFor(pay, { amount: 1, currency: 'EUR' })).toMatchObject({ status: 400, json: { error: { code: 'INVALID_INPUT', details: { field: 'order_id' } } } });
    expect(await mintFor(pay, { order_id: 'abc' })).toMatchObject({ status: 400, json: { error: { code: 'INVALID_INPUT' } } });
    // The message says what came, not what String() makes of it ([1] → 1, a huge number rounded).
    for (const [orderId, shown] of [[[1], 'an array'], [{ a: 1 }, 'an object'], [true, 'a boolean'], [1.5, '1.5']] as const) {
      const refused = await mintFor(pay, { order_id: orderId });
      expect(refused).toMatchObject({ status: 400, json: { error: { code: 'INVALID_INPUT', message: expect.stringContaining(`(got ${shown})`) } } });
    }
    const huge = await pay.handle({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json' }, rawBody: '{"order_id":9007199254740993}' });
    expect(JSON.parse(String(huge!.body))).toMatchObject({ error: { code: 'INVALID_INPUT', message: expect.stringContaining('(got a number above 2^53 - 1') } });
    // The order number a shopper sees (increment_id) is not the entity_id: refused, never read as another order.
    expect(await mintFor(pay, { order_id: '000000007' })).toMatchObject({ status: 400, json: { error: { code: 'INVALID_INPUT', details: { field: 'order_id' } } } });
  });

  it('answers a missing order with its id only: the platform\'s words, whose parameters could quote a customer, stay out of the answer', async () => {
    const order = sb.commerce.addOrder({ state: 'new', status: 'pending' });
    sb.commerce.faults.inject({
      route: `GET /rest/default/V1/orders/${order.entity_id}`,
      status: 404,
      body: JSON.stringify({ message: 'Invalid value of "%1" provided for the %2 field.', parameters: ['ada@example.com / 3 Oak Ave', 'customer_email'] }),
    });
    const answer = await mintFor(pay, { order_id: order.entity_id });
    expect(answer).toMatchObject({ status: 404, json: { error: { code: 'ORDER_NOT_FOUND', message: `Order ${order.entity_id} was not found on the commerce platform.` } } });
    expect(JSON.stringify(answer.json)).not.toContain('ada@example.com');
  });

  it('never takes the amount from the browser', async () => {
    const order = sb.commerce.addOrder({ state: 'new', status: 'pending', order_currency_code: 'EUR', grand_total: 50, total_due: 50 });
    const res = await mintFor(pay, { order_id: order.entity_id, amount: 1, currency: 'JPY' });
    expect(await minted(res.json.widget_token)).toMatchObject({ amount: 5_000, currency: 'EUR' });
  });

  it('does not charge an order again while a payment for it is confirmed or may still confirm', async () => {
    const order = sb.commerce.addOrder({ state: 'new', status: 'pending', order_currency_code: 'EUR', grand_total: 19.99, total_due: 19.99 });
    const payWith = async (card: string) => {
      const first = await mintFor(pay, { order_id: order.entity_id });
      expect(first.status).toBe(200);
      const response = await fetch(`${sb.paymentUrl}/api/v1/mobile/checkout`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ widget_token: first.json.widget_token, card: { number: card, exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, cvc: '123' } }),
      });
      const { payment_id: paymentId, payment_client_token: clientToken } = (await response.json()) as { payment_id: string; payment_client_token: string };
      await pay.payments.status(paymentId, { clientToken }); // the ledger learns the outcome, as from a webhook
      return paymentId;
    };

    // A declined payment leaves the order payable; a payment waiting on 3-D Secure may still confirm.
    await payWith(sb.testCards.declines);
    const waiting = await payWith(sb.testCards.requires3ds);
    const refused = await mintFor(pay, { order_id: order.entity_id });
    expect(refused).toMatchObject({ status: 409, json: { error: { code: 'ORDER_NOT_PAYABLE', details: { paymentId: waiting } } } });
    expect(refused.json.error.message).toMatch(/may yet confirm.*reconcile/);

    // Confirmed while the platform still shows the order pending: the shopper must not pay twice.
    const other = sb.commerce.addOrder({ state: 'new', status: 'pending', order_currency_code: 'EUR', grand_total: 5, total_due: 5 });
    const token = (await mintFor(pay, { order_id: other.entity_id })).json.widget_token as string;
    const paid = await fetch(`${sb.paymentUrl}/api/v1/mobile/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ widget_token: token, card: { number: sb.testCards.succeeds, exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, cvc: '123' } }),
    }).then((r) => r.json() as Promise<{ payment_id: string; payment_client_token: string }>);
    await pay.payments.reconcile(paid.payment_id, { clientToken: paid.payment_client_token });
    expect(sb.commerce.order(other.entity_id)?.state).toBe('new');
    const again = await mintFor(pay, { order_id: other.entity_id });
    expect(again).toMatchObject({ status: 409, json: { error: { code: 'ORDER_NOT_PAYABLE', details: { paymentId: paid.payment_id } } } });
    expect(again.json.error.message).toMatch(/already confirmed/);
    expect((await pay.payments.byOrder(String(other.increment_id))).map((entry) => entry.outcome)).toEqual(['confirmed']);

    // pay.checkoutForOrder keeps the same guards for a resolveCheckout of one's own (checkoutFromOrder checks only the order).
    await expect(pay.checkoutForOrder(other.entity_id)).rejects.toMatchObject({ code: 'ORDER_NOT_PAYABLE', details: { paymentId: paid.payment_id } });
    await expect(pay.checkoutForOrder(String(order.entity_id))).rejects.toMatchObject({ code: 'ORDER_NOT_PAYABLE', details: { paymentId: waiting } });
    const fresh = sb.commerce.addOrder({ state: 'new', status: 'pending', order_currency_code: 'JPY', grand_total: 1200, total_due: 1200 });
    expect(await pay.checkoutForOrder(fresh.entity_id)).toEqual({ amount: 1200, currency: 'JPY', orderId: fresh.increment_id });
  });

  it('asks the service again about a payment the ledger holds as failed before minting for its order again: a late confirmation whose webhook was lost stops it', async () => {
    const logger = captureLogger();
    const guarded = payFor(sb, { logger });
    const order = sb.commerce.addOrder({ state: 'new', status: 'pending', order_currency_code: 'EUR', grand_total: 42, total_due: 42 });
    // A bank payment the service canceled (the shopper left), then approved after all (no webhook reaches this instance).
    const payment = sb.payments.create({ method: 'pay_by_bank', amount: 4200, currency: 'EUR', orderId: String(order.increment_id), status: 'pending' });
    sb.payments.setStatus(payment.id, 'canceled');
    expect(await guarded.payments.reconcile(payment.id, { budgetMs: 0 })).toMatchObject({ outcome: 'failed', status: 'canceled' });
    sb.payments.setStatus(payment.id, 'succeeded');

    const refused = await mintFor(guarded, { order_id: order.entity_id });
    expect(refused).toMatchObject({ status: 409, json: { error: { code: 'ORDER_NOT_PAYABLE', details: { paymentId: payment.id } } } });
    expect(await guarded.payments.get(payment.id)).toMatchObject({ outcome: 'confirmed', status: 'succeeded' });

    // Still failed when asked again: the order is payable. The service cannot be asked: the ledger's word goes, and the log says so.
    const other = sb.commerce.addOrder({ state: 'new', status: 'pending', order_currency_code: 'EUR', grand_total: 7, total_due: 7 });
    const declined = sb.payments.create({ method: 'card', amount: 700, currency: 'EUR', orderId: String(other.increment_id), status: 'declined' });
    await guarded.payments.reconcile(declined.id, { budgetMs: 0 });
    expect((await mintFor(guarded, { order_id: other.entity_id })).status).toBe(200);
    sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', status: 503, body: '{"error":"down"}', times: Infinity });
    try {
      expect((await mintFor(guarded, { order_id: other.entity_id })).status).toBe(200);
    } finally {
      sb.faults.clear();
    }
    expect(logger.text()).toContain('could not be asked about a failed payment again');
  });

  it('goes by what the service says now of a payment the ledger holds as failed: one under way again stops a second charge, and reconcile says it needs reconciliation', async () => {
    const guarded = payFor(sb);
    const order = sb.commerce.addOrder({ state: 'new', status: 'pending', order_currency_code: 'EUR', grand_total: 42, total_due: 42 });
    const payment = sb.payments.create({ method: 'pay_by_bank', amount: 4200, currency: 'EUR', orderId: String(order.increment_id), status: 'pending' });
    sb.payments.setStatus(payment.id, 'canceled');
    expect(await guarded.payments.reconcile(payment.id, { budgetMs: 0 })).toMatchObject({ outcome: 'failed' });
    // The service takes it up again (the bank's approval on its way): it may still confirm.
    sb.payments.setStatus(payment.id, 'processing');
    expect(await guarded.payments.reconcile(payment.id, { budgetMs: 0 })).toMatchObject({ outcome: 'needs_reconciliation', status: 'processing' });
    const refused = await mintFor(guarded, { order_id: order.entity_id });
    expect(refused).toMatchObject({ status: 409, json: { error: { code: 'ORDER_NOT_PAYABLE', details: { paymentId: payment.id } } } });
    // Failed again: the order is payable again.
    sb.payments.setStatus(payment.id, 'canceled');
    expect((await mintFor(guarded, { order_id: order.entity_id })).status).toBe(200);
  });

  it('tells the shopper the order could not be priced, and only the log who and where: a refused admin login, an unreachable platform', async () => {
    const logger = captureLogger();
    const wrongPassword = payFor(sb, { logger, commerce: { password: 'not-the-password' } });
    const unreachable = payFor(sb, { logger, commerce: { url: 'http://127.0.0.1:9' }, http: { ...FAST_HTTP, maxRetries: 0 } });
    const order = sb.commerce.addOrder({ state: 'new', status: 'pending', order_currency_code: 'EUR', grand_total: 5, total_due: 5 });
    for (const [p, code] of [[wrongPassword, 'COMMERCE_AUTH_FAILED'], [unreachable, 'UPSTREAM_UNREACHABLE']] as const) {
      const res = await mintFor(p, { order_id: order.entity_id });
      expect(res.status).toBe(502);
      expect(res.json.error.code).toBe(code);
      expect(res.json.error.message).toMatch(/could not be read.*server log/);
      for (const detail of [sb.commerceUsername, '127.0.0.1']) expect(JSON.stringify(res.json)).not.toContain(detail);
    }
    expect(logger.text()).toContain(sb.commerceUsername);
    expect(logger.text()).toContain('127.0.0.1:9');
  });

  it('leaves the decision to resolveCheckout when the merchant passes one', async () => {
    const custom = payFor(sb, { resolveCheckout: () => ({ amount: 777, currency: 'EUR', orderId: 'mine' }) });
    const res = await mintFor(custom, { order_id: 1 });
    expect(await minted(res.json.widget_token)).toEqual({ order_id: 'mine', amount: 777, currency: 'EUR' });
  });

  it('still needs resolveCheckout when no commerce platform is configured', async () => {
    const bare = createPay({ env: {}, http: FAST_HTTP, payment: { apiUrl: sb.paymentUrl, merchantId: sb.merchantId, apiKey: sb.apiKey, webhookSecret: sb.webhookSecret } });
    expect(await mintFor(bare, { order_id: 1 })).toMatchObject({ status: 500, json: { error: { code: 'CHECKOUT_UNRESOLVED' } } });
  });
});

describe('authorizeOrder: whether the request may pay the order it names', () => {
  const payOf = (authorizeOrder: PayOptions['authorizeOrder'], logger = captureLogger()) => payFor(sb, { authorizeOrder, logger });
  const asShopper = (p: Pay, email: string, body: unknown) => p.handle({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json', 'x-shopper': email }, rawBody: JSON.stringify(body) });

  it("mints for the shopper's own order, and answers another's as if it did not exist, saying nothing of its state or payments", async () => {
    const mine = sb.commerce.addOrder({ state: 'new', status: 'pending', customer_email: 'ada@example.com' });
    const theirs = sb.commerce.addOrder({ state: 'new', status: 'pending', customer_email: 'bob@example.com' });
    const paidTheirs = sb.commerce.addOrder({ state: 'complete', status: 'complete', customer_email: 'bob@example.com' });
    const seen: Array<[string | undefined, number]> = [];
    const owner = payOf((request, order) => {
      seen.push([request.header('x-shopper'), order.entity_id]);
      return order.customer_email === request.header('x-shopper');
    });
    const own = await asShopper(owner, 'ada@example.com', { order_id: mine.entity_id });
    expect(own!.status).toBe(200);
    const missing = await asShopper(owner, 'ada@example.com', { order_id: 424_242 });
    for (const other of [theirs, paidTheirs]) {
      const refused = await asShopper(owner, 'ada@example.com', { order_id: other.entity_id });
      // The same answer as for an order that does not exist (a complete one would otherwise say 409 and why).
      expect([refused!.status, String(refused!.body).replaceAll(String(other.entity_id), 'N')]).toEqual([404, String(missing!.body).replaceAll('424242', 'N')]);
    }
    expect(seen).toEqual([['ada@example.com', mine.entity_id], ['ada@example.com', theirs.entity_id], ['ada@example.com', paidTheirs.entity_id]]);
  });

  it('is as strict as authorize: a thrown error is a 500 naming the hook, a verdict other than a boolean lets no one in', async () => {
    const order = sb.commerce.addOrder({ state: 'new', status: 'pending' });
    const logger = captureLogger();
    const throwing = await asShopper(payOf(() => {
      throw new Error('sessions database down');
    }, logger), 'ada@example.com', { order_id: order.entity_id });
    expect([throwing!.status, JSON.parse(String(throwing!.body)).error.code]).toEqual([500, 'CHECKOUT_UNRESOLVED']);
    // The browser is told nothing of it; the log names the hook, with its error.
    expect(logger.text()).toContain('The authorizeOrder hook passed to createPay threw an error');
    expect(logger.text()).toContain('sessions database down');
    const sloppy = await asShopper(payOf(() => 'ada' as unknown as boolean), 'ada@example.com', { order_id: order.entity_id });
    expect([sloppy!.status, JSON.parse(String(sloppy!.body)).error.code]).toEqual([500, 'CONFIG_INVALID']);
    expect(() => createPay({ env: {}, authorizeOrder: true as never })).toThrow(/authorizeOrder/);
    // With a resolveCheckout it would be ignored, the check it stands for missing without a word.
    expect(() => createPay({ env: {}, authorizeOrder: () => true, resolveCheckout: () => ({ amount: 1, currency: 'EUR', orderId: 'o' }) })).toThrow(/authorizeOrder applies to the default order resolver only/);
  });

  it('left out, is warned about once, at the first order minted through the default resolver', async () => {
    const logger = captureLogger();
    const open = payOf(undefined, logger);
    for (let i = 0; i < 2; i++) expect((await asShopper(open, 'anyone', { order_id: sb.commerce.addOrder({ state: 'new', status: 'pending' }).entity_id }))!.status).toBe(200);
    const warnings = logger.lines.map((line) => JSON.parse(line) as { level: string; msg?: string }).filter((line) => line.level === 'warn' && /authorizeOrder/.test(line.msg ?? ''));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.msg).toMatch(/^POST \/widget-token mints for any order whose entity_id a caller names: set authorizeOrder/);
    // Set, even to let everyone through (a pay-by-link page), it says nothing.
    const quiet = captureLogger();
    expect((await asShopper(payOf(() => true, quiet), 'anyone', { order_id: sb.commerce.addOrder({ state: 'new', status: 'pending' }).entity_id }))!.status).toBe(200);
    expect(quiet.text()).not.toContain('authorizeOrder');
  });
});

/** The examples' shared merchant records (examples/shared/orders.ts): the sweep that fulfils what a lost webhook would have. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPay, silentLogger } from 'paywidget-server';
import { startSandbox, type Sandbox } from 'paywidget-server/sandbox';
import { checkoutFor, orders, sweepPayments } from '../../examples/shared/orders.js';
import { eventually } from '../helpers/eventually.js';

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox(); // no webhook URL: the payment's webhook never comes
});
afterAll(() => sb.close());

describe('examples/shared/orders.ts', () => {
  it('sweeps the payments still unresolved and fulfils one its poll finds confirmed, once', async () => {
    let clock = Date.now();
    const pay = createPay({
      env: {}, logger: silentLogger, now: () => clock,
      payment: { apiUrl: sb.paymentUrl, merchantId: sb.merchantId, apiKey: sb.apiKey, webhookSecret: sb.webhookSecret },
      resolveCheckout: ({ body }) => checkoutFor(body, pay.payments),
    });
    const order = orders.get('1002')!;
    const checkout = await checkoutFor({ orderId: order.id }, pay.payments);
    const payment = sb.payments.create({ ...checkout, method: 'pay_by_bank' }); // pending at the bank
    expect((await pay.payments.reconcile(payment.id, { budgetMs: 0 })).outcome).toBe('needs_reconciliation');
    sb.payments.setStatus(payment.id, 'succeeded');
    clock += 2 * 60_000; // the sweep leaves payments younger than a minute alone
    const stop = sweepPayments(pay, 20);
    try {
      await eventually(() => order.status === 'paid', 5_000, 'the sweep to fulfil the order');
      expect(order.paymentId).toBe(payment.id);
      expect(await pay.payments.get(payment.id)).toMatchObject({ outcome: 'confirmed', source: 'poll' });
    } finally {
      stop();
    }
  });
  it('fulfils an order whose payment the checkout page\'s reconcile call found confirmed, when its webhook never came', async () => {
    const pay = createPay({
      env: {}, logger: silentLogger,
      payment: { apiUrl: sb.paymentUrl, merchantId: sb.merchantId, apiKey: sb.apiKey, webhookSecret: sb.webhookSecret },
      resolveCheckout: ({ body }) => checkoutFor(body, pay.payments),
    });
    const order = orders.get('1003')!;
    const checkout = await checkoutFor({ orderId: order.id }, pay.payments);
    const payment = sb.payments.create({ ...checkout, method: 'pay_by_bank' });
    sb.payments.setStatus(payment.id, 'succeeded');
    // The page's POST /payments/:id/reconcile: the ledger learns the confirmation from a poll, which no sweep looks at again.
    expect((await pay.payments.reconcile(payment.id, { budgetMs: 0 })).outcome).toBe('confirmed');
    expect(order.status).toBe('awaiting_payment');
    const stop = sweepPayments(pay, 20);
    try {
      await eventually(() => order.status === 'paid', 5_000, 'the sweep to fulfil the order');
      expect(order.paymentId).toBe(payment.id);
    } finally {
      stop();
    }
  });
});

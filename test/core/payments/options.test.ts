import { describe, expect, it } from 'vitest';
import { createPay, DEFAULT_TERMINAL_STATUSES, defaultExtractPayment, PayError } from 'paywidget-server';
import { signWebhook } from 'paywidget-server/testing';
import { resolvePaymentsOptions } from '../../../src/core/payments/options.js';
import { captureLogger } from '../../helpers/capture-logger.js';

describe('terminal statuses', () => {
  it('default to the common names (DESIGN.md decision 7), compared without case; unknown statuses are not terminal', () => {
    const { classify } = resolvePaymentsOptions();
    for (const s of DEFAULT_TERMINAL_STATUSES.confirmed) expect(classify(s)).toBe('confirmed');
    for (const s of DEFAULT_TERMINAL_STATUSES.failed) expect(classify(s)).toBe('failed');
    expect(classify('SUCCEEDED')).toBe('confirmed');
    for (const s of ['processing', 'requires_action', 'pending', 'authorised', '', null, undefined]) expect(classify(s)).toBe('unresolved');
  });

  it('are configurable: a list given replaces its default', () => {
    const { classify } = resolvePaymentsOptions({ terminalStatuses: { confirmed: ['settled', ...DEFAULT_TERMINAL_STATUSES.confirmed], failed: ['rejected'] } });
    expect(classify('settled')).toBe('confirmed');
    expect(classify('succeeded')).toBe('confirmed');
    expect(classify('rejected')).toBe('failed');
    expect(classify('declined')).toBe('unresolved');
  });

  it('refuses a status in both lists, and other bad options, naming them', () => {
    const bad = (options: object) => {
      try {
        createPay({ env: {}, payments: options as never });
      } catch (error) {
        expect(error).toBeInstanceOf(PayError);
        return (error as PayError);
      }
      throw new Error('no error');
    };
    expect(bad({ terminalStatuses: { confirmed: ['done'], failed: ['DONE'] } }).message).toContain("'done'");
    // A misspelt list would leave its default in force without a word.
    expect(bad({ terminalStatuses: { confirm: ['captured_ok'] } })).toMatchObject({ code: 'CONFIG_INVALID', details: { options: ['payments.terminalStatuses'] } });
    expect(bad({ terminalStatuses: { confirm: ['captured_ok'] } }).message).toContain('confirm');
    expect(bad({ statusAuth: 'bearer' })).toMatchObject({ code: 'CONFIG_INVALID', details: { options: ['payments.statusAuth'] } });
    expect(bad({ pollBudgetMs: -1 }).message).toContain('payments.pollBudgetMs');
    expect(bad({ extractPayment: 'data.id' }).message).toContain('payments.extractPayment');
    // A pause past Node's longest timer would fire after 1 ms: reconcile would poll in a tight loop.
    for (const option of ['pollIntervalMs', 'pollMaxIntervalMs']) {
      expect(bad({ [option]: 5e9 }).message).toMatch(new RegExp(`payments\\.${option}.*at most 2147483647`));
    }
    expect(createPay({ env: {}, payments: { pollIntervalMs: 2 ** 31 - 1, pollMaxIntervalMs: 2 ** 31 - 1 } })).toBeDefined();
  });
});

describe('defaultExtractPayment', () => {
  it.each([
    ['the sandbox shape', { id: 'evt_1', type: 'payment.succeeded', data: { payment_id: 'pay_1', status: 'succeeded', order_id: '000000042', amount: 1999, currency: 'EUR' } }, { paymentId: 'pay_1', status: 'succeeded', orderId: '000000042', amount: 1999, currency: 'EUR' }],
    ['top-level fields', { payment_id: 'pay_2', status: 'declined' }, { paymentId: 'pay_2', status: 'declined' }],
    ['camelCase', { paymentId: 'pay_3', status: 'paid', orderId: 'A-7' }, { paymentId: 'pay_3', status: 'paid', orderId: 'A-7' }],
    ['a Stripe-like object', { type: 'payment_intent.succeeded', data: { object: { id: 'pi_4', status: 'succeeded', amount: 500, currency: 'usd', metadata: { order_id: '9' } } } }, { paymentId: 'pi_4', status: 'succeeded', amount: 500, currency: 'USD', orderId: '9' }],
    ['a status only in the type', { type: 'payment.captured', data: { payment_id: 'pay_5' } }, { paymentId: 'pay_5', status: 'captured' }],
    // The envelope's own status (the delivery's) is not the payment's: the most specific place wins.
    ['the most specific place first', { type: 'payment.updated', status: 'delivered', data: { status: 'pending', object: { id: 'pi_6', status: 'succeeded' } } }, { paymentId: 'pi_6', status: 'succeeded' }],
  ])('reads %s', (_name, payload, expected) => {
    expect(defaultExtractPayment(payload)).toEqual(expected);
  });

  it.each([
    ['an event about something else', { type: 'refund.succeeded', data: { payment_id: 'pay_1', status: 'succeeded' } }],
    // Their type begins with 'payment', but the id or the status is another thing's.
    ['a payment method', { type: 'payment_method.attached', data: { object: { id: 'pm_1', status: 'active' } } }],
    ['a payment link', { type: 'payment_link.updated', data: { object: { id: 'plink_1', status: 'active' } } }],
    ['a refund of a payment', { type: 'payment.refund.succeeded', data: { payment_id: 'pay_1', status: 'succeeded' } }],
    ['a dispute of a payment', { type: 'payment.dispute_created', data: { payment_id: 'pay_1', status: 'needs_response' } }],
    ['no payment id', { type: 'payment.succeeded', data: { status: 'succeeded' } }],
    ['no status', { data: { payment_id: 'pay_1' } }],
    ['not an object', 'payment'],
    ['null', null],
  ])('ignores %s', (_name, payload) => {
    expect(defaultExtractPayment(payload)).toBeUndefined();
  });

  it('can be replaced; a payload it cannot use is answered 200 and recorded nowhere', async () => {
    const secret = 'whsec_options_test';
    const pay = createPay({
      env: {},
      payment: { apiUrl: 'http://127.0.0.1:9', merchantId: 'm', apiKey: 'k', webhookSecret: secret },
      payments: { extractPayment: (p) => { const e = p as { ref?: string; state?: string }; return e.ref ? { paymentId: e.ref, status: e.state ?? '' } : undefined; } },
    });
    const post = async (payload: unknown) => {
      const d = signWebhook({ payload, secret });
      return (await pay.handle({ method: 'POST', path: '/webhooks', headers: d.headers, rawBody: d.body }))?.status;
    };
    expect(await post({ ref: 'pay_custom', state: 'SUCCEEDED' })).toBe(200);
    expect(await pay.payments.get('pay_custom')).toMatchObject({ status: 'SUCCEEDED', outcome: 'confirmed', source: 'webhook' });
    expect(await post({ ref: 'bad/id', state: 'succeeded' })).toBe(200);
    expect(await post({ ref: 'pay_nostatus' })).toBe(200);
    expect(await pay.payments.get('pay_nostatus')).toBeUndefined();
  });

  it('says so when a payment event carries no id or status where it looks (the payloads changed shape), and not for other events', async () => {
    const secret = 'whsec_options_test';
    const logger = captureLogger();
    const pay = createPay({ env: {}, logger, payment: { apiUrl: 'http://127.0.0.1:9', merchantId: 'm', apiKey: 'k', webhookSecret: secret } });
    const post = async (payload: unknown) => {
      const d = signWebhook({ payload, secret });
      return (await pay.handle({ method: 'POST', path: '/webhooks', headers: d.headers, rawBody: d.body }))?.status;
    };
    expect(await post({ type: 'payment.succeeded', data: { payment: { id: 'pay_nested' } } })).toBe(200);
    expect(await post({ type: 'refund.succeeded', data: { refund_id: 're_1' } })).toBe(200);
    expect(await post({ type: 'payment_method.attached', data: { object: { id: 'pm_1' } } })).toBe(200);
    const warned = logger.lines.map((line) => JSON.parse(line) as { level: string; msg: string; type?: string }).filter((line) => line.level === 'warn');
    expect(warned.map((line) => line.type)).toEqual(['payment.succeeded']);
    expect(warned[0]!.msg).toContain('pass payments.extractPayment');
  });

  it('a throwing extractor fails the delivery (500), so the sender retries', async () => {
    const secret = 'whsec_options_test';
    const pay = createPay({
      env: {},
      payment: { apiUrl: 'http://127.0.0.1:9', merchantId: 'm', apiKey: 'k', webhookSecret: secret },
      payments: { extractPayment: () => { throw new Error('boom'); } },
    });
    let merchantHandlerRan = false;
    pay.webhooks.onAny(() => { merchantHandlerRan = true; });
    const d = signWebhook({ payload: { type: 'payment.succeeded' }, secret });
    expect((await pay.handle({ method: 'POST', path: '/webhooks', headers: d.headers, rawBody: d.body }))?.status).toBe(500);
    expect(merchantHandlerRan).toBe(false);
  });
});

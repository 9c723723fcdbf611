import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from 'paywidget-server/sandbox';

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox();
});
afterAll(() => sb.close());

const create = (body: unknown) => fetch(`${sb.paymentUrl}/sandbox/payments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('creating a payment directly (test control)', () => {
  it('sb.payments.create makes a payment the status endpoint serves; a terminal one sends its webhook', async () => {
    const processing = sb.payments.create({ amount: 1999, currency: 'EUR', orderId: '000000007' });
    expect(processing).toMatchObject({ status: 'processing', method: 'card', amount: 1999, orderId: '000000007', paymentClientToken: expect.stringMatching(/^pct_/) });
    const status = await fetch(`${sb.paymentUrl}/api/v1/payments/${processing.id}/status`, { headers: { authorization: `Bearer ${processing.paymentClientToken}` } });
    expect(await status.json()).toEqual({ payment_id: processing.id, status: 'processing', amount: 1999, currency: 'EUR', order_id: '000000007' });

    const declined = sb.payments.create({ amount: 5, currency: 'USD', orderId: 'o', status: 'declined' });
    expect(declined.declineCode).toBe('generic_decline');
    expect(sb.webhooks.events.at(-1)).toMatchObject({ type: 'payment.failed', data: { payment_id: declined.id, status: 'declined' } });

    const bank = sb.payments.create({ amount: 5, currency: 'USD', orderId: 'o', method: 'pay_by_bank' });
    expect(bank.status).toBe('pending');
    expect((await fetch(`${sb.paymentUrl}/sandbox/bank/${bank.id}/approve`, { method: 'POST' })).status).toBe(200);
    expect(sb.payments.get(bank.id)?.status).toBe('succeeded');

    expect(() => sb.payments.create({ amount: 0, currency: 'EUR', orderId: 'o' })).toThrow(/amount/);
    expect(() => sb.payments.create({ amount: 1, currency: 'EUR', orderId: 'o', status: 'lost' as never })).toThrow(/status/);
  });

  it('POST /sandbox/payments answers 201 with the id and client token; 422 naming a bad field', async () => {
    const response = await create({ amount: 700, currency: 'JPY', order_id: 'jp-1', status: 'succeeded' });
    expect(response.status).toBe(201);
    const body = (await response.json()) as { payment_id: string; status: string; payment_client_token: string };
    expect(body).toMatchObject({ status: 'succeeded', payment_client_token: expect.stringMatching(/^pct_/) });
    expect(sb.payments.get(body.payment_id)).toMatchObject({ amount: 700, currency: 'JPY', orderId: 'jp-1' });

    const bad = await create({ amount: 700, currency: 'jpy', order_id: 'x' });
    expect(bad.status).toBe(422);
    expect(await bad.json()).toMatchObject({ error: { code: 'invalid_request', message: expect.stringContaining('currency') } });
  });
});

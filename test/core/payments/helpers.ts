import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPay, type Pay, type PayOptions, type PayResponse } from 'paywidget-server';
import type { Sandbox } from 'paywidget-server/sandbox';
import { sendPayResponse, toPayRequest } from '../../../src/adapters/node/index.js';

/** Quick polls and short deadlines: the whole suite stays within seconds. */
export const FAST_HTTP = { attemptTimeoutMs: 1_000, totalTimeoutMs: 2_000, backoffBaseMs: 5, backoffMaxMs: 20, maxRetries: 1 };
export const FAST_POLL = { pollBudgetMs: 600, pollIntervalMs: 20, pollMaxIntervalMs: 80 };

/** A pay instance against the sandbox (payment service, and its commerce platform). */
export function payFor(sb: Sandbox, overrides: Partial<PayOptions> = {}): Pay {
  return createPay({
    env: {},
    payment: { apiUrl: sb.paymentUrl, merchantId: sb.merchantId, apiKey: sb.apiKey, webhookSecret: sb.webhookSecret },
    commerce: { url: sb.commerceUrl, username: sb.commerceUsername, password: sb.commercePassword },
    http: FAST_HTTP,
    ...overrides,
    payments: { ...FAST_POLL, ...overrides.payments },
  });
}

/** A bare node:http server that hands every request under `/pay` to `pay.handle`: where the sandbox posts its webhooks. */
export async function serve(pay: Pay): Promise<{ webhookUrl: string; base: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname.replace(/^\/pay/, '');
    toPayRequest(req, path, pay.maxBodyBytes)
      .then((request) => pay.handle(request))
      .then((response) => sendPayResponse(res, response ?? { status: 404, headers: {}, body: '' }))
      .catch(() => sendPayResponse(res, { status: 500, headers: {}, body: '' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/pay`;
  return {
    base,
    webhookUrl: `${base}/webhooks`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** Pays with a test card through the sandbox's real endpoints: mint, mobile checkout. */
export async function payByCard(pay: Pay, sb: Sandbox, card: string, order = { amount: 1999, currency: 'EUR', orderId: 'order-1' }) {
  const token = await pay.mintWidgetToken(order);
  const response = await fetch(`${sb.paymentUrl}/api/v1/mobile/checkout`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ widget_token: token.widgetToken, card: { number: card, exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, cvc: '123' } }),
  });
  if (response.status !== 201) throw new Error(`mobile checkout answered ${response.status}: ${await response.text()}`);
  const body = (await response.json()) as { payment_id: string; payment_client_token: string };
  return { paymentId: body.payment_id, clientToken: body.payment_client_token };
}

/** Starts a pay-by-bank payment: `pending` until the bank page is approved (webhook) or abandoned. */
export async function payByBank(pay: Pay, sb: Sandbox, order = { amount: 4200, currency: 'EUR', orderId: 'order-bank' }) {
  const token = await pay.mintWidgetToken(order);
  const response = await fetch(`${sb.paymentUrl}/api/v1/checkout`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ widget_token: token.widgetToken, method: 'pay_by_bank', return_url: 'https://shop.example.com/return' }),
  });
  if (response.status !== 201) throw new Error(`checkout answered ${response.status}: ${await response.text()}`);
  const body = (await response.json()) as { payment_id: string; payment_client_token: string; redirect_url: string };
  return { paymentId: body.payment_id, clientToken: body.payment_client_token, redirectUrl: body.redirect_url };
}

export function bodyText(response: PayResponse | null): string {
  if (!response) throw new Error('the route did not answer');
  return typeof response.body === 'string' ? response.body : Buffer.from(response.body).toString('utf8');
}


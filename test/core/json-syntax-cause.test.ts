/**
 * JSON.parse's SyntaxError quotes a snippet of its input on Node 20+, and util.inspect prints an error's
 * cause. Each place the library parses JSON it did not write (a route's body, an upstream answer, a webhook)
 * must say the text was not JSON without carrying any of it: not in the error, not in the HTTP answer.
 */
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPay, PayError, type Pay } from 'paywidget-server';
import { startSandbox, type Sandbox } from 'paywidget-server/sandbox';
import { signWebhook } from 'paywidget-server/testing';
import { readJsonBody } from '../../src/core/request-body.js';
import { serve } from './payments/helpers.js';
import { rejection } from '../helpers/pay-errors.js';

// Unquoted values, as a broken client or proxy might send: V8 quotes the text around the bad token.
const ROUTE_BODY = '{"orderId":"o-1","payment_client_token":tok_SECRET123abc';
const UPSTREAM_BODY = '{"widget_token":wt_SECRET456def,"expires_at":"2030-01-01T00:00:00Z"}';
const WEBHOOK_BODY = '{"type":"payment.succeeded","client_secret":cs_SECRET789ghi}';

let sandbox: Sandbox;
let pay: Pay;
let server: Awaited<ReturnType<typeof serve>>;

beforeAll(async () => {
  sandbox = await startSandbox();
  pay = createPay({
    env: {},
    payment: { apiUrl: sandbox.paymentUrl, merchantId: sandbox.merchantId, apiKey: sandbox.apiKey, webhookSecret: sandbox.webhookSecret },
    resolveCheckout: () => ({ amount: 500, currency: 'EUR', orderId: 'o-1' }),
    http: { maxRetries: 0 },
  });
  server = await serve(pay);
});
afterAll(async () => {
  await server?.close();
  await sandbox?.close();
});

const post = async (path: string, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) => {
  const response = await fetch(`${server.base}${path}`, { method: 'POST', headers, body });
  return { status: response.status, text: await response.text() };
};

function signed(body: string) {
  const delivery = signWebhook({ payload: body, secret: sandbox.webhookSecret });
  return { rawBody: delivery.body, headers: { ...delivery.headers } };
}

const cases = [
  {
    place: 'a route body (INVALID_JSON)',
    input: ROUTE_BODY,
    code: 'INVALID_JSON',
    status: 400,
    // The route answers over HTTP; the error itself is what readJsonBody throws to the route.
    error: async () => {
      try {
        readJsonBody({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json' }, rawBody: ROUTE_BODY }, 1024 * 1024);
      } catch (error) {
        return error as PayError;
      }
      throw new Error('readJsonBody accepted a malformed body');
    },
    answer: () => post('/widget-token', ROUTE_BODY),
  },
  {
    place: 'an upstream answer (UPSTREAM_INVALID_RESPONSE)',
    input: UPSTREAM_BODY,
    code: 'UPSTREAM_INVALID_RESPONSE',
    status: 502,
    error: () => {
      sandbox.faults.inject({ route: 'POST /api/v1/checkout/init', status: 200, headers: { 'content-type': 'application/json' }, body: UPSTREAM_BODY });
      return rejection(pay.mintWidgetToken({ amount: 500, currency: 'EUR', orderId: 'o-1' }));
    },
    answer: () => {
      sandbox.faults.inject({ route: 'POST /api/v1/checkout/init', status: 200, headers: { 'content-type': 'application/json' }, body: UPSTREAM_BODY });
      return post('/widget-token', '{"orderId":"o-1"}');
    },
  },
  {
    place: 'a signed webhook (WEBHOOK_INVALID_JSON)',
    input: WEBHOOK_BODY,
    code: 'WEBHOOK_INVALID_JSON',
    status: 400,
    error: () => rejection(pay.webhooks.verify(signed(WEBHOOK_BODY))),
    answer: () => {
      const { rawBody, headers } = signed(WEBHOOK_BODY);
      return post('/webhooks', String(rawBody), headers);
    },
  },
];

describe.each(cases)('JSON that does not parse, in $place', ({ input, code, status, error, answer }) => {
  it('would leak through JSON.parse’s own message (so the checks below can fail)', () => {
    expect(() => JSON.parse(input)).toThrow(/SECRET/);
  });

  it('says the text was not JSON, and neither the error (with its cause) nor the answer holds any of it', async () => {
    const thrown = await error();
    expect(thrown.code).toBe(code);
    expect(thrown.message).toMatch(/not (valid )?JSON/);
    expect(thrown.cause).toBeInstanceOf(SyntaxError);
    expect(inspect(thrown, { depth: 10 })).not.toContain('SECRET');
    expect(JSON.stringify(thrown)).not.toContain('SECRET');

    const response = await answer();
    expect(response.status).toBe(status);
    const body = JSON.parse(response.text) as { error: { code: string; message: string } };
    expect(body.error.code).toBe(code);
    expect(body.error.message).toMatch(/not (valid )?JSON/);
    expect(response.text).not.toContain('SECRET');
  });
});

it('keeps the position of the error, which quotes nothing', async () => {
  const thrown = await rejection(pay.webhooks.verify(signed('{"type":"t",}')));
  expect((thrown.cause as SyntaxError).message).toBe('Not valid JSON (error at position 12)');
});

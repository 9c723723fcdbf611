/**
 * A page that goes away mid-request: `POST /payments/:id/reconcile` stops polling the payment service
 * (each poll would otherwise go on for the whole budget, for nobody). Real frameworks over real HTTP.
 */
import { readFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { connect as http2Connect, constants as http2Constants, createSecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPay, type Pay } from 'paywidget-server';
import { payMiddleware } from 'paywidget-server/express';
import { payRouter } from 'paywidget-server/koa';
import { createRouteHandlers } from 'paywidget-server/next';
import { startSandbox, type Sandbox } from 'paywidget-server/sandbox';
import { eventually } from '../helpers/eventually.js';
import { listen } from './listen.js';

let sb: Sandbox;
let pay: Pay;
beforeAll(async () => {
  sb = await startSandbox();
  pay = createPay({
    env: {},
    payment: { apiUrl: sb.paymentUrl, merchantId: sb.merchantId, apiKey: sb.apiKey, webhookSecret: sb.webhookSecret },
    // A budget far past the waits below: polling that ignored the hang-up would still be going when they end.
    payments: { pollBudgetMs: 30_000, pollIntervalMs: 20, pollMaxIntervalMs: 20 },
  });
});
afterAll(() => sb?.close());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A payment that stays processing, and a count of the status polls about it. */
function pollsOfAPaymentUnderWay() {
  const { id } = sb.payments.create({ amount: 500, currency: 'EUR', orderId: `gone-${Math.random()}` });
  const rule = sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', latencyMs: 1, times: Infinity });
  return { id, polls: () => sb.faults.list().find((f) => f.id === rule)!.hits, done: () => sb.faults.remove(rule) };
}

/**
 * Polls seen while the client was there (waited for, not timed: a loaded machine polls slower), and
 * polls after it left, counted once a poll already on its way has landed.
 */
async function pollsAround(leave: () => void, polls: () => number) {
  await eventually(() => polls() > 3, 4_000, 'a few polls while the client was there');
  const whilePresent = polls();
  leave();
  // Settled: no new poll for 150 ms. Polling on every 20 ms, it never settles, and the wait fails.
  let last = polls();
  let quietSince = Date.now();
  await eventually(() => {
    if (polls() !== last) [last, quietSince] = [polls(), Date.now()];
    return Date.now() - quietSince >= 150;
  }, 3_000, 'the polling to stop after the client left');
  const atLeaving = polls();
  await sleep(400); // ~20 more polls at 20 ms, were it still polling
  return { whilePresent, after: polls() - atLeaving };
}

describe.each([
  ['Express 5', () => { const app = express(); app.use('/pay', payMiddleware(pay)); return createServer(app); }],
  ['Koa 3', () => { const app = new Koa(); app.use(payRouter(pay, { prefix: '/pay' }).routes()); return createServer(app.callback()); }],
] as const)('%s: a client that hangs up during POST /payments/:id/reconcile', (_name, server) => {
  it('stops the polling', async () => {
    const app = await listen(server(), '/pay');
    const { id, polls, done } = pollsOfAPaymentUnderWay();
    try {
      const sent = httpRequest(`${app.webhookUrl!.replace(/\/webhooks$/, '')}/payments/${id}/reconcile`, { method: 'POST', headers: { 'content-type': 'application/json' } });
      sent.on('error', () => {});
      sent.end('{}');
      const { whilePresent, after } = await pollsAround(() => sent.destroy(), polls);
      expect(whilePresent).toBeGreaterThan(3);
      expect(after).toBe(0); // it polled on for the whole budget
    } finally {
      done();
      await app.close();
    }
  });
});

describe('Koa 3 on HTTP/2: a client that resets its stream during POST /payments/:id/reconcile', () => {
  it('stops the polling', async () => {
    const tls = (file: string) => readFileSync(new URL(`../fixtures/tls/${file}`, import.meta.url));
    const app = new Koa();
    app.use(payRouter(pay, { prefix: '/pay' }).routes());
    const server = createSecureServer({ key: tls('key.pem'), cert: tls('cert.pem'), allowHTTP1: true }, app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = http2Connect(`https://127.0.0.1:${(server.address() as AddressInfo).port}`, { rejectUnauthorized: false });
    client.on('error', () => {});
    const { id, polls, done } = pollsOfAPaymentUnderWay();
    try {
      const stream = client.request({ ':method': 'POST', ':path': `/pay/payments/${id}/reconcile`, 'content-type': 'application/json' });
      stream.on('error', () => {});
      stream.end('{}');
      const { whilePresent, after } = await pollsAround(() => stream.close(http2Constants.NGHTTP2_CANCEL), polls);
      expect(whilePresent).toBeGreaterThan(3);
      expect(after).toBe(0); // its compatibility response said finished: the hang-up went unheard
    } finally {
      done();
      client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('Next App Router: a Request aborted during POST /payments/:id/reconcile', () => {
  it('stops the polling', async () => {
    const { POST } = createRouteHandlers(pay);
    const { id, polls, done } = pollsOfAPaymentUnderWay();
    const controller = new AbortController();
    try {
      const request = new Request(`http://shop.test/api/pay/payments/${id}/reconcile`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}', signal: controller.signal });
      const answered = POST(request, { params: Promise.resolve({ path: ['payments', id, 'reconcile'] }) });
      const { whilePresent, after } = await pollsAround(() => controller.abort(), polls);
      expect(whilePresent).toBeGreaterThan(3);
      expect(after).toBe(0);
      await answered;
    } finally {
      done();
    }
  });
});

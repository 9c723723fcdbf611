import { inspect } from 'node:util';
import { once } from 'node:events';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MemoryLedgerStore, PayError, UpstreamError, type LedgerStore, type Pay, type SweepChange } from 'paywidget-server';
import { startSandbox, type Sandbox } from 'paywidget-server/sandbox';
import { signWebhook } from 'paywidget-server/testing';
import { captureLogger } from '../../helpers/capture-logger.js';
import { stepWallClockBack } from '../../helpers/wall-clock.js';
import { eventually } from '../../helpers/eventually.js';
import { payByBank, payByCard, payFor, serve } from './helpers.js';
import { rejection as payErrorOf } from '../../helpers/pay-errors.js';

let sb: Sandbox;
const logger = captureLogger();
/** Every client token handed out in this file, and every error seen: none may show up in a log line or an error. */
const secrets: string[] = [];
const errors: unknown[] = [];
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  sb = await startSandbox({ webhookRetry: { attempts: 3, baseDelayMs: 20, timeoutMs: 2_000 } });
  secrets.push(sb.apiKey, sb.webhookSecret);
});
afterEach(async () => {
  sb.setWebhookUrl(undefined);
  sb.payments.setConfirmDelay(0);
  sb.faults.clear();
  await Promise.all(closers.splice(0).map((close) => close()));
});
afterAll(() => sb.close());

/** A pay instance whose webhooks arrive from the sandbox over real HTTP (node:http → pay.handle). */
async function payWithWebhooks(overrides: Parameters<typeof payFor>[1] = {}): Promise<Pay> {
  const pay = payFor(sb, { logger, ...overrides });
  const receiver = await serve(pay);
  closers.push(receiver.close);
  sb.setWebhookUrl(receiver.webhookUrl);
  return pay;
}

async function card(pay: Pay, number: string, order?: { amount: number; currency: string; orderId: string }) {
  const paid = await payByCard(pay, sb, number, order);
  secrets.push(paid.clientToken);
  return paid;
}

async function rejection(promise: Promise<unknown>): Promise<PayError> {
  const error = await payErrorOf(promise);
  errors.push(error);
  return error;
}

describe('reconcile', () => {
  it('starts no poll the budget has no room for: a slow status answer is the last one', async () => {
    const pay = payFor(sb, { logger });
    sb.payments.setConfirmDelay(60_000);
    const { paymentId, clientToken } = await card(pay, sb.testCards.succeeds);
    try {
      // The first poll takes 900 ms of a 1,000 ms budget: the 100 ms left are too few for another.
      sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', latencyMs: 900, times: Infinity });
      expect(await pay.payments.reconcile(paymentId, { budgetMs: 1_000, clientToken })).toMatchObject({ outcome: 'needs_reconciliation' });
      expect(sb.faults.list()[0]!.hits).toBe(1);
    } finally {
      sb.payments.setConfirmDelay(0);
    }
  });

  it('stops polling when the service asks to wait (429 Retry-After) longer than the budget has left, and says how long', async () => {
    const pay = payFor(sb, { logger });
    const { paymentId, clientToken } = await payByBank(pay, sb);
    secrets.push(clientToken);
    const limited = sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', status: 429, headers: { 'Retry-After': '30' }, body: '{"error":"slow down"}', times: Infinity });
    const started = Date.now();
    const result = await pay.payments.reconcile(paymentId, { budgetMs: 20_000, clientToken });
    expect(result).toMatchObject({ outcome: 'needs_reconciliation', retryAfterMs: 30_000 });
    // One poll, answered at once: polling a rate limit again inside its Retry-After only prolongs it.
    expect(sb.faults.list().find((f) => f.id === limited)!.hits).toBe(1);
    // Not a speed check: it guards against sitting out the 20 s budget (or the 30 s Retry-After) before
    // answering. The normal figure is tens of ms; 5 s is far above it and far below what must not be waited.
    expect(Date.now() - started).toBeLessThan(5_000);
    // A wait past Node's longest timer (24.8 days) would fire after 1 ms: even a budget that long stops.
    sb.faults.clear();
    const month = sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', status: 429, headers: { 'Retry-After': String(30 * 86_400) }, body: '{}', times: Infinity });
    expect(await pay.payments.reconcile(paymentId, { budgetMs: 60 * 86_400_000, clientToken })).toMatchObject({ outcome: 'needs_reconciliation', retryAfterMs: 30 * 86_400_000 });
    expect(sb.faults.list().find((f) => f.id === month)!.hits).toBe(1);
    // Four hundred digits: still a number of milliseconds, never Infinity (it goes into a header and a JSON report).
    sb.faults.clear();
    sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', status: 429, headers: { 'Retry-After': '9'.repeat(400) }, body: '{}', times: Infinity });
    const forever = await pay.payments.reconcile(paymentId, { budgetMs: 2_000, clientToken });
    expect(forever).toMatchObject({ outcome: 'needs_reconciliation', retryAfterMs: Number.MAX_SAFE_INTEGER });
  });

  it('waits out a Retry-After shorter than the budget before polling again', async () => {
    const pay = payFor(sb, { logger, http: { maxRetries: 0 } });
    const { paymentId, clientToken } = await payByBank(pay, sb);
    secrets.push(clientToken);
    const limited = sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', status: 503, headers: { 'Retry-After': '1' }, body: 'maintenance', times: 1 });
    sb.payments.setStatus(paymentId, 'succeeded');
    const started = Date.now();
    expect(await pay.payments.reconcile(paymentId, { budgetMs: 3_000, clientToken })).toMatchObject({ outcome: 'confirmed' });
    expect(sb.faults.list().some((f) => f.id === limited)).toBe(false); // used up: it answered the first poll
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('answers needs_reconciliation when the payment confirms after the budget; the webhook then resolves it', async () => {
    const pay = await payWithWebhooks();
    sb.payments.setConfirmDelay(3_000);
    const { paymentId, clientToken } = await card(pay, sb.testCards.succeeds, { amount: 1999, currency: 'EUR', orderId: '000000101' });

    const started = Date.now();
    const first = await pay.payments.reconcile(paymentId, { budgetMs: 150, clientToken });
    // Not a speed check: it guards the budget as a deadline, i.e. that reconcile does not wait for the
    // confirmation 3 s away. 1.5 s is 10x the budget and half the time to that confirmation.
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(first).toEqual({ paymentId, status: 'processing', outcome: 'needs_reconciliation', source: 'poll', orderId: '000000101', amount: 1999, currency: 'EUR' });
    expect(await pay.payments.get(paymentId)).toMatchObject({ outcome: 'unresolved', status: 'processing' });

    const entry = await eventually(async () => {
      const e = await pay.payments.get(paymentId);
      return e?.outcome === 'confirmed' ? e : undefined;
    }, 15_000);
    expect(entry).toMatchObject({ status: 'succeeded', source: 'webhook', orderId: '000000101', amount: 1999, currency: 'EUR' });
    // Known now: answered from the ledger, without polling.
    sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', status: 500, times: Infinity });
    expect(await pay.payments.reconcile(paymentId, { budgetMs: 0 })).toMatchObject({ outcome: 'confirmed', status: 'succeeded', source: 'webhook' });
    expect(sb.faults.list()[0]?.hits).toBe(0);
  });

  it('polls with back-off until the payment confirms within the budget', async () => {
    const pay = payFor(sb, { logger });
    sb.payments.setConfirmDelay(200);
    const { paymentId } = await card(pay, sb.testCards.succeeds);
    const result = await pay.payments.reconcile(paymentId, { budgetMs: 2_000 });
    expect(result).toMatchObject({ paymentId, status: 'succeeded', outcome: 'confirmed', source: 'poll' });
  });

  it('answers failed for a declined card, after one poll: a failure is final for this request', async () => {
    const pay = payFor(sb, { logger });
    const { paymentId, clientToken } = await card(pay, sb.testCards.declines);
    const polls = sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', latencyMs: 1, times: Infinity });
    expect(await pay.payments.reconcile(paymentId, { clientToken, budgetMs: 5_000 })).toMatchObject({ paymentId, status: 'declined', outcome: 'failed', source: 'poll' });
    expect(sb.faults.list().find((f) => f.id === polls)!.hits).toBe(1);
    const status = await pay.payments.status(paymentId, { clientToken });
    expect(status).toMatchObject({ status: 'declined', outcome: 'failed', declineCode: 'generic_decline' });
  });

  it('keeps polling through 5xx and time-outs, and answers needs_reconciliation (not an error) when they last the whole budget', async () => {
    const pay = payFor(sb, { logger });
    const { paymentId } = await card(pay, sb.testCards.succeeds);
    sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', status: 503, times: Infinity });
    const result = await pay.payments.reconcile(paymentId, { budgetMs: 1_000 });
    // Why nothing was learned goes with the answer: a service down reads otherwise like a payment still pending.
    expect(result).toEqual({ paymentId, status: null, outcome: 'needs_reconciliation', source: null, lastError: { code: 'UPSTREAM_ERROR', message: 'The payment service answered HTTP 503.' } });
    expect(sb.faults.list()[0]!.hits).toBeGreaterThan(1);
    // Recorded anyway, so the sweep finds it once the service is back.
    sb.faults.clear();
    const sweep = await pay.payments.reconcilePending();
    expect(sweep.changed).toContainEqual({ paymentId, from: null, to: 'succeeded', outcome: 'confirmed', orderId: 'order-1', source: 'poll' });
  });

  it('says no last error when the service answered after failing: the payment is pending, not unreadable', async () => {
    const pay = payFor(sb, { logger });
    const pending = sb.payments.create({ amount: 500, currency: 'USD', orderId: 'o-pending', method: 'pay_by_bank' });
    sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', status: 503, times: 1 });
    const result = await pay.payments.reconcile(pending.id, { budgetMs: 600 });
    expect(sb.faults.list()).toEqual([]); // the one 503 was answered
    expect(result).toEqual({ paymentId: pending.id, status: 'pending', outcome: 'needs_reconciliation', source: 'poll', orderId: 'o-pending', amount: 500, currency: 'USD' });
  });

  it('keeps its budget in real time: a wall clock stepped back an hour mid-poll does not keep the request polling for that hour', async () => {
    const pay = payFor(sb, { logger });
    const { paymentId } = await card(pay, sb.testCards.succeeds);
    sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', status: 503, times: Infinity });
    const started = performance.now();
    const clock = stepWallClockBack(3_600_000, 50);
    let stepped: boolean;
    try {
      const result = await pay.payments.reconcile(paymentId, { budgetMs: 300 });
      expect(result.outcome).toBe('needs_reconciliation');
    } finally {
      stepped = clock.restore();
    }
    expect(stepped).toBe(true); // the clock did step while it polled
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('logs an outage of the payment service once per reconcile, with the last error, not once per poll and retry', async () => {
    const own = captureLogger();
    const pay = payFor(sb, { logger: own });
    const { paymentId } = await card(pay, sb.testCards.succeeds);
    sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', status: 503, times: Infinity });
    own.lines.length = 0;
    const result = await pay.payments.reconcile(paymentId, { budgetMs: 600 });
    expect(result.outcome).toBe('needs_reconciliation');
    const calls = sb.faults.list()[0]!.hits;
    expect(calls).toBeGreaterThan(2);
    const loud = own.lines.map((line) => JSON.parse(line) as { level: string; msg: string }).filter((line) => line.level === 'warn' || line.level === 'error');
    expect(loud).toEqual([expect.objectContaining({ paymentId, lastError: 'UPSTREAM_ERROR', msg: expect.stringContaining('still unresolved after the poll budget') })]);
    // The detail stays at debug, for whoever turns it on.
    const polls = own.lines.map((line) => JSON.parse(line) as { level: string; paymentId?: string; status?: number }).filter((line) => line.level === 'debug' && line.paymentId === paymentId && line.status === 503);
    // One call a poll: the loop is the retry. Retried inside too, a made-up payment id cost anyone who sent it
    // 22 calls to a failing service over the default budget.
    expect(polls.length).toBe(calls);
  });

  it('warns when a payment under way names no order: the mint guard cannot see it', async () => {
    const own = captureLogger();
    const pay = payFor(sb, { logger: own });
    const { paymentId } = await card(pay, sb.testCards.succeeds);
    // The status body as the payment document shows it: the id and the status, nothing else.
    sb.faults.inject({ route: `GET /api/v1/payments/${paymentId}/status`, status: 200, body: JSON.stringify({ payment_id: paymentId, status: 'processing' }), times: 2 });
    await pay.payments.reconcile(paymentId, { budgetMs: 0 });
    await pay.payments.reconcile(paymentId, { budgetMs: 0 }); // nothing new learned: said once
    const orderUnknown = () => own.lines.map((line) => JSON.parse(line) as { level: string; msg: string }).filter((line) => line.level === 'warn' && line.msg.includes('named its order'));
    expect(orderUnknown()).toEqual([expect.objectContaining({ paymentId, msg: expect.stringMatching(/would mint for it again/) })]);
    // Its status answer naming the order (the sandbox's own), nothing more is said.
    await pay.payments.reconcile(paymentId, { budgetMs: 0 });
    expect(orderUnknown()).toHaveLength(1);
    expect((await pay.payments.get(paymentId))?.orderId).toBeDefined();
  });

  it('throws for what polling cannot fix: an unknown payment, a malformed id', async () => {
    const pay = payFor(sb, { logger });
    const unknown = await rejection(pay.payments.reconcile('pay_does_not_exist', { budgetMs: 1_000 }));
    expect(unknown.code).toBe('PAYMENT_NOT_FOUND');
    expect(unknown.status).toBe(404);
    const malformed = await rejection(pay.payments.reconcile('../checkout/init'));
    expect(malformed).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'paymentId' } });
    // A lone surrogate passes the shape but cannot be put into a URL: bad input, not a URIError.
    expect(await rejection(pay.payments.reconcile('pay_\uD800', { budgetMs: 0 }))).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'paymentId' } });
    expect(await rejection(pay.payments.status('pay_\uDC00x'))).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'paymentId' } });
  });

  it('stops a poll in flight when its signal aborts, answering what it knows', async () => {
    const pay = payFor(sb, { logger, http: { attemptTimeoutMs: 15_000 } });
    const { paymentId, clientToken } = await payByBank(pay, sb);
    secrets.push(clientToken);
    const hanging = sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', hang: true, times: Infinity });
    const started = Date.now();
    const result = await pay.payments.reconcile(paymentId, { budgetMs: 60_000, clientToken, signal: AbortSignal.timeout(200) });
    // Not a speed check: it guards that the abort ends the poll in flight instead of its 15 s attempt
    // time-out (or the 60 s budget). 5 s is 25x the 200 ms signal and a third of the attempt time-out.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result).toMatchObject({ paymentId, outcome: 'needs_reconciliation' });
    // The poll that hung was the only one: an abort starts none after it.
    expect(sb.faults.list().find((f) => f.id === hanging)!.hits).toBe(1);
  });

  it('records the answer of the poll in flight when its caller goes away (a shopper reloading the page mid-poll), under its order', async () => {
    const pay = payFor(sb, { logger });
    const { paymentId, clientToken } = await payByBank(pay, sb, { amount: 900, currency: 'EUR', orderId: 'order-reloaded' });
    secrets.push(clientToken);
    sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', latencyMs: 300, times: 1 });
    // Through the route, as the page calls it: the request's signal aborts when the page goes away.
    const answer = await pay.handle({ method: 'POST', path: `/payments/${paymentId}/reconcile`, headers: { 'content-type': 'application/json' }, rawBody: '{}', signal: AbortSignal.timeout(50) });
    expect(JSON.parse(String(answer!.body))).toMatchObject({ outcome: 'needs_reconciliation', status: null });
    // Answered after the caller left: the ledger has it, and the mint guard finds it by its order.
    expect(await eventually(async () => (await pay.payments.byOrder('order-reloaded'))[0])).toMatchObject({ paymentId, status: 'pending', outcome: 'unresolved' });
  });

  it('leaves no answer to a stopped sweep\'s poll behind it: the next sweep still finds the payment and reports the change', async () => {
    const pay = payFor(sb, { logger });
    const { paymentId, clientToken } = await payByBank(pay, sb, { amount: 900, currency: 'EUR', orderId: 'order-swept' });
    secrets.push(clientToken);
    await pay.payments.reconcile(paymentId, { budgetMs: 0, clientToken }); // pending, in the ledger
    sb.payments.setStatus(paymentId, 'succeeded');
    sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', latencyMs: 300, times: 1 });
    const stopped = await pay.payments.reconcilePending({ signal: AbortSignal.timeout(100) });
    expect(stopped.changed).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 400)); // the stopped poll's answer would have come by now
    const changes: string[] = [];
    const next = await pay.payments.reconcilePending({ onChange: (change) => void changes.push(`${change.paymentId}:${change.to}`) });
    expect(next.changed.map((change) => change.paymentId)).toContain(paymentId);
    expect(changes).toContain(`${paymentId}:succeeded`);
  });

  it('starts no poll on a signal already aborted', async () => {
    const pay = payFor(sb, { logger });
    const hits = sb.faults.inject({ route: 'GET /api/v1/payments/pay_never_asked/status', status: 503, body: '{}', times: Infinity });
    try {
      expect(await pay.payments.reconcile('pay_never_asked', { signal: AbortSignal.abort() })).toMatchObject({ outcome: 'needs_reconciliation' });
      await new Promise((resolve) => setTimeout(resolve, 200)); // a poll sent would have reached the service by now
      expect(sb.faults.list().find((f) => f.id === hits)!.hits).toBe(0);
    } finally {
      sb.faults.remove(hits);
    }
  });

  it('records nothing for a payment id whose caller went away before the service said anything (anyone can send ids to the route)', async () => {
    const pay = payFor(sb, { logger });
    sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', latencyMs: 300, times: Infinity });
    try {
      for (let i = 0; i < 5; i++) {
        const controller = new AbortController();
        const answer = pay.handle({ method: 'POST', path: `/payments/pay_hung_up_${i}/reconcile`, headers: { 'content-type': 'application/json' }, rawBody: '{}', signal: controller.signal });
        setTimeout(() => controller.abort(), 20);
        await answer;
      }
    } finally {
      sb.faults.clear();
    }
    for (let i = 0; i < 5; i++) expect(await pay.payments.get(`pay_hung_up_${i}`)).toBeUndefined();
    // One the service could not answer is still recorded, for the sweep: it may be a real payment.
    sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', status: 503, body: '{"error":"down"}', times: Infinity });
    try {
      await pay.payments.reconcile('pay_service_down', { budgetMs: 0 });
    } finally {
      sb.faults.clear();
    }
    expect(await pay.payments.get('pay_service_down')).toMatchObject({ outcome: 'unresolved', status: null });
  });

  it.each([['pay_other'], [123]])('refuses a status answer naming another payment (%j): a proxy or cache mixing up answers, and records nothing', async (other) => {
    const pay = payFor(sb, { logger });
    const { paymentId, clientToken } = await payByBank(pay, sb);
    secrets.push(clientToken);
    sb.faults.inject({ route: `GET /api/v1/payments/${paymentId}/status`, status: 200, body: JSON.stringify({ payment_id: other, status: 'succeeded' }), times: Infinity });
    const error = await rejection(pay.payments.status(paymentId, { clientToken }));
    expect(error).toMatchObject({ code: 'UPSTREAM_INVALID_RESPONSE', status: 502 });
    expect(error.message).toContain(`with the status of another payment (${other})`);
    expect(await pay.payments.get(paymentId)).toBeUndefined();
  });

  it('takes a status answer naming the payment by a number for that payment (a service with numeric ids)', async () => {
    const pay = payFor(sb, { logger });
    sb.faults.inject({ route: 'GET /api/v1/payments/123/status', status: 200, body: JSON.stringify({ payment_id: 123, status: 'succeeded' }), times: Infinity });
    expect(await pay.payments.status('123')).toMatchObject({ paymentId: '123', status: 'succeeded', outcome: 'confirmed' });
  });

  it('takes a currency in lower case as the same currency (the ledger and the order cross-check compare codes)', async () => {
    const pay = payFor(sb, { logger });
    sb.faults.inject({ route: 'GET /api/v1/payments/pay_lower/status', status: 200, body: JSON.stringify({ payment_id: 'pay_lower', status: 'succeeded', amount: 1999, currency: 'eur' }), times: Infinity });
    expect(await pay.payments.reconcile('pay_lower')).toMatchObject({ status: 'succeeded', amount: 1999, currency: 'EUR' });
    expect(await pay.payments.get('pay_lower')).toMatchObject({ currency: 'EUR' });
  });

  it('stops at once on a redirect (an out-of-date address), naming where it points, not polling the budget away', async () => {
    const pay = payFor(sb, { logger });
    const { paymentId, clientToken } = await payByBank(pay, sb);
    secrets.push(clientToken);
    const moved = sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', status: 301, headers: { Location: 'https://pay.example.com/api/v1/payments/x/status?token=tok_in_query' }, times: Infinity });
    const error = await rejection(pay.payments.reconcile(paymentId, { budgetMs: 5_000, clientToken }));
    expect(error).toMatchObject({ code: 'UPSTREAM_INVALID_RESPONSE', status: 502 });
    expect(error.message).toContain('redirect (HTTP 301) to https://pay.example.com/api/v1/payments/x/status');
    // The advice is the base URL to set, not the endpoint (which the configuration would refuse).
    expect(error.message).toContain('set PAY_API_URL (payment.apiUrl) to https://pay.example.com.');
    expect(error.message).not.toContain('tok_in_query');
    expect(sb.faults.list().find((f) => f.id === moved)!.hits).toBe(1);
  });

  it('stops at once on an answer that is not HTTP (the URL names another service\'s port), not polling the budget away', async () => {
    let connections = 0;
    const tls = createTcpServer((socket) => {
      connections += 1;
      socket.once('data', () => socket.end('\x15\x03\x01\x00\x02\x02\x46')); // a TLS alert, as an https-only port answers plain HTTP
    });
    tls.listen(0, '127.0.0.1');
    await once(tls, 'listening');
    try {
      const pay = payFor(sb, { logger, payment: { apiUrl: `http://127.0.0.1:${(tls.address() as AddressInfo).port}`, merchantId: sb.merchantId, apiKey: sb.apiKey } });
      const error = await rejection(pay.payments.reconcile('pay_not_http', { budgetMs: 5_000 }));
      expect(error).toMatchObject({ code: 'UPSTREAM_INVALID_RESPONSE', status: 502, details: { notHttp: true } });
      expect(error.message).toContain('Check PAY_API_URL (payment.apiUrl): the port, and https:// for a TLS port.');
      expect(connections).toBe(1);
    } finally {
      tls.close();
    }
  });
});

describe('a status as the service sent it, around its value', () => {
  it('reads a stray space, tab or newline as the status it names (terminal), and a numeric order_id as its text', async () => {
    const pay = payFor(sb, { logger });
    for (const [sent, outcome] of [['succeeded ', 'confirmed'], ['Paid\t', 'confirmed'], ['\ndeclined\n', 'failed']] as const) {
      const id = `pay_ws_${outcome}_${sent.length}`;
      sb.faults.inject({ route: `GET /api/v1/payments/${id}/status`, status: 200, body: JSON.stringify({ payment_id: id, status: sent, order_id: 4_242, amount: 1999, currency: 'EUR' }), times: Infinity });
      const result = await pay.payments.reconcile(id, { budgetMs: 0 });
      expect(result).toMatchObject({ outcome, status: sent.trim(), orderId: '4242' });
      expect(await pay.payments.get(id)).toMatchObject({ outcome, status: sent.trim(), orderId: '4242' });
    }
    // Filed under its order, a confirmed payment keeps that order from being minted again.
    expect((await pay.payments.byOrder('4242')).map((entry) => entry.outcome)).toContain('confirmed');
    // From JavaScript, the order id as a number finds the same entries, as Redis's text keys would; anything else is refused, not "none".
    expect(await pay.payments.byOrder(4_242 as unknown as string)).toEqual(await pay.payments.byOrder('4242'));
    for (const wrong of [undefined, 42.5, { id: '4242' }]) {
      await expect(pay.payments.byOrder(wrong as unknown as string)).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'orderId' } });
    }
  });

  it('records a webhook whose status ends in a newline as confirmed, not as a payment to poll for ever', async () => {
    const pay = payFor(sb, { logger });
    const receiver = await serve(pay);
    closers.push(receiver.close);
    const { body, headers } = signWebhook({ payload: { id: 'evt_ws', type: 'payment.succeeded', data: { payment_id: 'pay_ws_hook', status: 'succeeded\n', order_id: 'ws-hook' } }, secret: sb.webhookSecret, eventId: 'evt_ws' });
    const answer = await fetch(receiver.webhookUrl, { method: 'POST', headers, body: body as string });
    expect(answer.status).toBe(200);
    expect(await pay.payments.get('pay_ws_hook')).toMatchObject({ status: 'succeeded', outcome: 'confirmed' });
  });
});

describe('pay by bank', () => {
  it('is not a success when the shopper returns; the approval arrives by signed webhook through POST /webhooks', async () => {
    const pay = await payWithWebhooks();
    const seen: string[] = [];
    // The merchant's handler runs after the ledger recorded the event, so it sees the confirmed payment.
    pay.webhooks.on('payment.succeeded', async ({ payload }) => {
      const id = (payload as { data: { payment_id: string } }).data.payment_id;
      seen.push((await pay.payments.get(id))?.outcome ?? 'missing');
    });
    const { paymentId, clientToken } = await payByBank(pay, sb, { amount: 4200, currency: 'EUR', orderId: '000000102' });
    secrets.push(clientToken);

    // The shopper came back from the bank page: still pending, so the SDK's poll runs out.
    const returned = await pay.payments.reconcile(paymentId, { budgetMs: 120, clientToken });
    expect(returned).toMatchObject({ status: 'pending', outcome: 'needs_reconciliation' });

    const approve = await fetch(`${sb.paymentUrl}/sandbox/bank/${paymentId}/approve`, { method: 'POST' });
    expect(approve.status).toBe(200);
    await sb.webhooks.idle();
    const delivered = sb.webhooks.delivered.filter((d) => d.paymentId === paymentId);
    expect(delivered.map((d) => d.status)).toEqual([200]);
    expect(await pay.payments.get(paymentId)).toMatchObject({ status: 'succeeded', outcome: 'confirmed', source: 'webhook', orderId: '000000102', amount: 4200 });
    expect(seen).toEqual(['confirmed']);
  });

  it('an abandoned bank page never resolves: the sweep leaves it unresolved', async () => {
    const pay = payFor(sb, { logger });
    const { paymentId, clientToken } = await payByBank(pay, sb);
    secrets.push(clientToken);
    expect(await pay.payments.reconcile(paymentId, { budgetMs: 80 })).toMatchObject({ outcome: 'needs_reconciliation', status: 'pending' });
    const sweep = await pay.payments.reconcilePending();
    expect(sweep).toEqual({ checked: 1, changed: [], unresolved: [paymentId], errors: [], forgotten: [], complete: true });
  });

  it('a ledger that fails answers the delivery 503 and releases the claim, so the retry records it', async () => {
    let failures = 1;
    const store = new MemoryLedgerStore();
    const flaky: LedgerStore = {
      get: (id) => store.get(id),
      list: (query) => store.list(query),
      byOrder: (orderId) => store.byOrder(orderId),
      forget: (id, condition) => store.forget(id, condition),
      record: async (observation) => {
        if (observation.source === 'webhook' && failures-- > 0) throw new Error('ECONNRESET ledger (test)');
        return store.record(observation);
      },
    };
    const pay = await payWithWebhooks({ stores: { ledger: flaky } });
    const { paymentId, clientToken } = await payByBank(pay, sb);
    secrets.push(clientToken);
    await fetch(`${sb.paymentUrl}/sandbox/bank/${paymentId}/approve`, { method: 'POST' });
    await sb.webhooks.idle();
    expect(sb.webhooks.delivered.filter((d) => d.paymentId === paymentId).map((d) => d.status)).toEqual([503, 200]);
    expect(await pay.payments.get(paymentId)).toMatchObject({ outcome: 'confirmed', source: 'webhook' });
  });
});

describe('the ledger never moves a status backwards', () => {
  it('keeps succeeded when a late poll says processing and a late webhook says pending', async () => {
    const pay = await payWithWebhooks();
    sb.payments.setConfirmDelay(Infinity);
    const { paymentId, clientToken } = await card(pay, sb.testCards.succeeds, { amount: 700, currency: 'USD', orderId: '000000103' });
    expect((await pay.payments.status(paymentId, { clientToken })).status).toBe('processing');

    sb.payments.setStatus(paymentId, 'succeeded'); // the real signed webhook
    await sb.webhooks.idle();
    expect(await pay.payments.get(paymentId)).toMatchObject({ status: 'succeeded', outcome: 'confirmed', source: 'webhook' });

    sb.payments.setStatus(paymentId, 'processing'); // a stale read
    expect((await pay.payments.status(paymentId, { clientToken })).status).toBe('processing');
    const late = signWebhook({ payload: { id: 'evt_late', type: 'payment.pending', data: { payment_id: paymentId, status: 'pending' } }, secret: sb.webhookSecret });
    const answer = await pay.handle({ method: 'POST', path: '/webhooks', headers: late.headers, rawBody: late.body });
    expect(answer?.status).toBe(200);

    const entry = await pay.payments.get(paymentId);
    expect(entry).toMatchObject({ status: 'succeeded', outcome: 'confirmed', source: 'webhook' });
    expect(await pay.payments.reconcile(paymentId)).toMatchObject({ outcome: 'confirmed', status: 'succeeded' });
    expect(logger.text()).toContain('a status never moves backwards');
  });

  it('lets a confirmation outrank an earlier failure, whatever order they arrive in', async () => {
    const pay = payFor(sb, { logger });
    const post = async (id: string, status: string) => {
      const d = signWebhook({ payload: { type: `payment.${status}`, data: { payment_id: 'pay_race', status, order_id: '000000104' } }, secret: sb.webhookSecret, eventId: id });
      return (await pay.handle({ method: 'POST', path: '/webhooks', headers: d.headers, rawBody: d.body }))?.status;
    };
    expect(await post('evt_a', 'succeeded')).toBe(200);
    expect(await post('evt_b', 'declined')).toBe(200);
    expect(await post('evt_c', 'processing')).toBe(200);
    expect(await pay.payments.get('pay_race')).toMatchObject({ status: 'succeeded', outcome: 'confirmed', orderId: '000000104' });
  });
});

describe('reconcile after an answer is known', () => {
  it('answers a confirmation from the ledger without asking, and asks again about a failure, which a later confirmation outranks', async () => {
    const pay = payFor(sb, { logger });
    const bank = await payByBank(pay, sb, { amount: 900, currency: 'EUR', orderId: 'late-approval' });
    secrets.push(bank.clientToken);
    sb.payments.setStatus(bank.paymentId, 'canceled');
    expect(await pay.payments.reconcile(bank.paymentId, { budgetMs: 0 })).toMatchObject({ outcome: 'failed', status: 'canceled' });
    sb.payments.setStatus(bank.paymentId, 'succeeded'); // its webhook never reaches this instance
    expect(await pay.payments.reconcile(bank.paymentId, { budgetMs: 0 })).toMatchObject({ outcome: 'confirmed', status: 'succeeded', source: 'poll' });

    // Confirmed: the service is not asked again (here it could not even answer).
    const down = sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', status: 503, body: '{"error":"down"}', times: Infinity });
    expect(await pay.payments.reconcile(bank.paymentId, { budgetMs: 0 })).toMatchObject({ outcome: 'confirmed' });
    expect(sb.faults.list().find((f) => f.id === down)!.hits).toBe(0);
  });

  it('asks again about a failure within the reconcile\'s budget: a status call that hangs is given up at the budget, not after 3 s', async () => {
    const pay = payFor(sb, { logger });
    const bank = await payByBank(pay, sb, { amount: 900, currency: 'EUR', orderId: 'recheck-budget' });
    secrets.push(bank.clientToken);
    sb.payments.setStatus(bank.paymentId, 'canceled');
    expect(await pay.payments.reconcile(bank.paymentId, { budgetMs: 0 })).toMatchObject({ outcome: 'failed' });
    const hang = sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', latencyMs: 60_000, times: Infinity });
    try {
      const before = logger.lines.length;
      expect(await pay.payments.reconcile(bank.paymentId, { budgetMs: 400 })).toMatchObject({ outcome: 'failed', status: 'canceled' });
      const warned = logger.lines.slice(before).join('\n');
      expect(warned).toContain('could not be asked about a failed payment again');
      expect(warned).toContain('did not answer within 400 ms');
    } finally {
      sb.faults.remove(hang);
    }
  });
});

describe('the status credential', () => {
  it('is the client token when given: it works with deliberately wrong merchant credentials', async () => {
    const good = payFor(sb, { logger });
    const { paymentId, clientToken } = await card(good, sb.testCards.succeeds);
    const wrongMerchant = payFor(sb, { logger, payment: { apiUrl: sb.paymentUrl, merchantId: sb.merchantId, apiKey: 'sk_test_deliberately_wrong', webhookSecret: sb.webhookSecret } });

    expect(await wrongMerchant.payments.status(paymentId, { clientToken })).toMatchObject({ paymentId, status: 'succeeded', outcome: 'confirmed' });
    expect(await wrongMerchant.payments.reconcile(paymentId, { clientToken })).toMatchObject({ outcome: 'confirmed' });

    const withoutToken = await rejection(wrongMerchant.payments.status(paymentId));
    expect(withoutToken).toBeInstanceOf(UpstreamError);
    expect(withoutToken.status).toBe(401);
    expect(withoutToken.message).toContain('PAY_MERCHANT_API_KEY');
    // A refused credential is permanent: reconcile throws at once instead of polling out its budget.
    // A fault that changes nothing (no status, no latency) counts the status requests: one each.
    const polls = sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', times: Infinity });
    expect((await rejection(wrongMerchant.payments.reconcile('pay_other', { budgetMs: 5_000 }))).status).toBe(404);
    expect(sb.faults.list().find((f) => f.id === polls)!.hits).toBe(1);
    expect((await rejection(payFor(sb, { logger, payment: { apiUrl: sb.paymentUrl, merchantId: 'm', apiKey: 'sk_wrong_2', webhookSecret: 'w' } }).payments.reconcile(paymentId, { budgetMs: 5_000 }))).status).toBe(401);
    expect(sb.faults.list().find((f) => f.id === polls)!.hits).toBe(2);
  });

  it("is the merchant's alone with statusAuth 'merchant', and the token's alone with 'client-token'", async () => {
    const { paymentId, clientToken } = await card(payFor(sb, { logger }), sb.testCards.succeeds);
    const merchantOnly = payFor(sb, { logger, payments: { statusAuth: 'merchant' }, payment: { apiUrl: sb.paymentUrl, merchantId: sb.merchantId, apiKey: 'sk_test_wrong', webhookSecret: 'w' } });
    expect((await rejection(merchantOnly.payments.status(paymentId, { clientToken }))).status).toBe(401);

    const tokenOnly = payFor(sb, { logger, payments: { statusAuth: 'client-token' } });
    expect(await tokenOnly.payments.status(paymentId, { clientToken })).toMatchObject({ status: 'succeeded' });
    const missing = await rejection(tokenOnly.payments.status(paymentId));
    expect(missing).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'clientToken' } });
  });

  it('says, when a service that takes only the client token refuses the merchant credentials, that the token is what it wants', async () => {
    // The Payment API document names only the payment_client_token for this call.
    const literal = await startSandbox({ statusAcceptsMerchantCredentials: false });
    try {
      const pay = payFor(literal, { logger });
      const { paymentId, clientToken } = await payByCard(pay, literal, literal.testCards.succeeds);
      secrets.push(clientToken);
      expect(await pay.payments.status(paymentId, { clientToken })).toMatchObject({ status: 'succeeded' });
      const refused = await rejection(pay.payments.status(paymentId));
      expect(refused).toBeInstanceOf(UpstreamError);
      expect(refused.status).toBe(401);
      expect(refused.message).toContain('PAY_MERCHANT_API_KEY');
      expect(refused.message).toContain("accepts only the payment's payment_client_token");
      expect(refused.message).toContain('{ clientToken }');
      // Not "the page has it": the widget's events carry no client token, and a page's reconcile call then learns nothing.
      expect(refused.message).toContain("the web widget's events do not pass it to the page");
      expect(refused.message).toContain("a page's reconcile call cannot then learn an outcome");
    } finally {
      await literal.close();
    }
  });

  it("refuses another payment's client token", async () => {
    const pay = payFor(sb, { logger });
    const a = await card(pay, sb.testCards.succeeds);
    const b = await card(pay, sb.testCards.succeeds);
    const error = await rejection(pay.payments.status(a.paymentId, { clientToken: b.clientToken }));
    expect(error.status).toBe(401);
  });
});

describe('reconcilePending (the sweep)', () => {
  it('resolves every resolvable payment and leaves the rest', async () => {
    const pay = payFor(sb, { logger }); // no webhooks reach it: only the sweep can resolve
    sb.payments.setConfirmDelay(Infinity);
    const willSucceed = await card(pay, sb.testCards.succeeds, { amount: 100, currency: 'EUR', orderId: 'sweep-1' });
    const willDecline = await card(pay, sb.testCards.succeeds, { amount: 200, currency: 'EUR', orderId: 'sweep-2' });
    const staysProcessing = await card(pay, sb.testCards.succeeds, { amount: 300, currency: 'EUR', orderId: 'sweep-3' });
    const abandoned = await payByBank(pay, sb, { amount: 400, currency: 'EUR', orderId: 'sweep-4' });
    const alreadyDone = await card(pay, sb.testCards.declines, { amount: 500, currency: 'EUR', orderId: 'sweep-5' });
    secrets.push(abandoned.clientToken);
    for (const p of [willSucceed, willDecline, staysProcessing, abandoned, alreadyDone]) await pay.payments.reconcile(p.paymentId, { budgetMs: 0 });
    // A payment only a webhook told us about, which the service does not know.
    const ghost = signWebhook({ payload: { type: 'payment.processing', data: { payment_id: 'pay_ghost', status: 'processing' } }, secret: sb.webhookSecret });
    expect((await pay.handle({ method: 'POST', path: '/webhooks', headers: ghost.headers, rawBody: ghost.body }))?.status).toBe(200);

    sb.payments.setStatus(willSucceed.paymentId, 'succeeded');
    sb.payments.setStatus(willDecline.paymentId, 'declined');

    expect((await pay.payments.reconcilePending({ olderThanMs: 60_000 })).checked).toBe(0);
    const report = await pay.payments.reconcilePending({ concurrency: 2 });
    expect(report.checked).toBe(5);
    expect(report.complete).toBe(true);
    expect(report.changed).toEqual(expect.arrayContaining([
      { paymentId: willSucceed.paymentId, orderId: 'sweep-1', from: 'processing', to: 'succeeded', outcome: 'confirmed', source: 'poll' },
      { paymentId: willDecline.paymentId, orderId: 'sweep-2', from: 'processing', to: 'declined', outcome: 'failed', source: 'poll' },
    ]));
    expect(report.changed).toHaveLength(2);
    expect(report.unresolved.sort()).toEqual([staysProcessing.paymentId, abandoned.paymentId, 'pay_ghost'].sort());
    expect(report.errors).toEqual([{ paymentId: 'pay_ghost', code: 'PAYMENT_NOT_FOUND', message: expect.stringContaining('pay_ghost') }]);

    const again = await pay.payments.reconcilePending();
    expect(again.checked).toBe(3);
    expect(again.changed).toEqual([]);
  });

  it('reports a payment still under way in its summary, without a warning for it at every run', async () => {
    const sweepLogger = captureLogger();
    const pay = payFor(sb, { logger: sweepLogger });
    const abandoned = await payByBank(pay, sb, { amount: 400, currency: 'EUR', orderId: 'sweep-quiet' });
    secrets.push(abandoned.clientToken);
    await pay.payments.reconcile(abandoned.paymentId, { budgetMs: 0 });
    const warnedBefore = sweepLogger.lines.filter((line) => line.includes('"level":"warn"')).length;
    for (let run = 0; run < 2; run++) expect((await pay.payments.reconcilePending()).unresolved).toContain(abandoned.paymentId);
    const lines = sweepLogger.lines.map((line) => JSON.parse(line) as { level: string; msg: string; unresolved?: number });
    expect(lines.filter((line) => line.level === 'warn')).toHaveLength(warnedBefore);
    expect(lines.filter((line) => line.msg === 'payment sweep finished').map((line) => line.unresolved)).toEqual([1, 1]);
  });

  it('still warns of a payment the service could not answer about, so an outage during a sweep is heard', async () => {
    const sweepLogger = captureLogger();
    const pay = payFor(sb, { logger: sweepLogger, http: { maxRetries: 0 } });
    const pending = await payByBank(pay, sb, { amount: 400, currency: 'EUR', orderId: 'sweep-outage' });
    secrets.push(pending.clientToken);
    await pay.payments.reconcile(pending.paymentId, { budgetMs: 0 });
    const outage = sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', status: 503, times: Infinity });
    try {
      expect((await pay.payments.reconcilePending({ budgetMs: 200 })).unresolved).toEqual([pending.paymentId]);
    } finally {
      sb.faults.remove(outage);
    }
    const warned = sweepLogger.lines.map((line) => JSON.parse(line) as { level: string; paymentId?: string; lastError?: string }).filter((line) => line.level === 'warn');
    expect(warned).toContainEqual(expect.objectContaining({ paymentId: pending.paymentId, lastError: 'UPSTREAM_ERROR' }));
  });

  it('stops starting payments when the service asks to wait (Retry-After), and reports how long', async () => {
    const pay = payFor(sb, { logger });
    for (let i = 0; i < 3; i++) {
      const { paymentId, clientToken } = await payByBank(pay, sb);
      secrets.push(clientToken);
      await pay.payments.reconcile(paymentId, { budgetMs: 0 }); // pending: now in the ledger, unresolved
    }
    const limited = sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', status: 429, headers: { 'Retry-After': '60' }, body: '{"error":"slow down"}', times: Infinity });
    const report = await pay.payments.reconcilePending({ concurrency: 1 });
    expect(report).toMatchObject({ checked: 1, retryAfterMs: 60_000, complete: false });
    expect(sb.faults.list().find((f) => f.id === limited)!.hits).toBe(1);
  });

  it('is complete when the service asked to wait after the last payment, whatever the concurrency', async () => {
    const { paymentId, clientToken } = await payByBank(payFor(sb, { logger }), sb);
    secrets.push(clientToken);
    const limited = sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', status: 429, headers: { 'Retry-After': '1' }, body: '{"error":"slow down"}', times: Infinity });
    try {
      for (const concurrency of [1, 4]) {
        const pay = payFor(sb, { logger });
        await pay.payments.reconcile(paymentId, { budgetMs: 0 }); // the one payment of this ledger, unresolved
        expect([concurrency, await pay.payments.reconcilePending({ concurrency })]).toEqual([concurrency, expect.objectContaining({ checked: 1, retryAfterMs: 1_000, complete: true })]);
      }
    } finally {
      sb.faults.remove(limited);
    }
  });

  it('says a sweep its signal stopped is not complete: a cancelled run must not read as "nothing left to do"', async () => {
    const pay = payFor(sb, { logger });
    const { paymentId, clientToken } = await payByBank(pay, sb);
    secrets.push(clientToken);
    await pay.payments.reconcile(paymentId, { budgetMs: 0 }); // pending: unresolved in the ledger
    const stopped = await pay.payments.reconcilePending({ signal: AbortSignal.abort() });
    expect(stopped).toMatchObject({ checked: 0, unresolved: [], complete: false });
    expect((await pay.payments.reconcilePending()).complete).toBe(true);
  });

  it('is not complete when workers waiting on the listing got payments after the stop, though another reached its end', async () => {
    const pay = payFor(sb, { logger });
    for (let i = 0; i < 3; i++) {
      const { paymentId, clientToken } = await payByBank(pay, sb);
      secrets.push(clientToken);
      await pay.payments.reconcile(paymentId, { budgetMs: 0 });
    }
    // Four workers ask the listing for its next entry at once; the stop comes before any is handed out.
    const controller = new AbortController();
    const sweep = pay.payments.reconcilePending({ concurrency: 4, signal: controller.signal });
    controller.abort();
    expect(await sweep).toMatchObject({ checked: 0, complete: false });
    expect(await pay.payments.reconcilePending({ concurrency: 4 })).toMatchObject({ checked: 3, complete: true });
  });

  it('starts no payment after the service asked to wait, though other workers were waiting on a slow listing', async () => {
    /** A store whose listing takes a while per entry, as a Redis round trip per page does. */
    class SlowListing extends MemoryLedgerStore {
      override async *list(query: Parameters<MemoryLedgerStore['list']>[0]) {
        for await (const entry of super.list(query)) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          yield entry;
        }
      }
    }
    const pay = payFor(sb, { logger, stores: { ledger: new SlowListing() } });
    for (let i = 0; i < 6; i++) {
      const { paymentId, clientToken } = await payByBank(pay, sb);
      secrets.push(clientToken);
      await pay.payments.reconcile(paymentId, { budgetMs: 0 });
    }
    const limited = sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', status: 429, headers: { 'Retry-After': '60' }, body: '{"error":"slow down"}', times: Infinity });
    const report = await pay.payments.reconcilePending({ concurrency: 4 });
    expect(report).toMatchObject({ checked: 1, retryAfterMs: 60_000 });
    expect(sb.faults.list().find((f) => f.id === limited)!.hits).toBe(1);
  });

  it('says a change came by webhook when the delivery arrived between its listing and its poll (its handlers already ran)', async () => {
    let listed!: () => void;
    const listing = new Promise<void>((resolve) => (listed = resolve));
    let proceed!: () => void;
    const held = new Promise<void>((resolve) => (proceed = resolve));
    /** A listing that hands its entry over only once the test lets it, as a slow Redis page would. */
    class HeldListing extends MemoryLedgerStore {
      override async *list(query: Parameters<MemoryLedgerStore['list']>[0]) {
        for await (const entry of super.list(query)) {
          listed();
          await held;
          yield entry;
        }
      }
    }
    const pay = await payWithWebhooks({ stores: { ledger: new HeldListing() } });
    sb.payments.setConfirmDelay(Infinity);
    const paid = await card(pay, sb.testCards.succeeds, { amount: 700, currency: 'EUR', orderId: 'sweep-webhook' });
    await pay.payments.reconcile(paid.paymentId, { budgetMs: 0 }); // processing: unresolved in the ledger
    const sweep = pay.payments.reconcilePending({ concurrency: 1 });
    await listing;
    sb.payments.setStatus(paid.paymentId, 'succeeded'); // the service confirms and delivers its webhook
    await eventually(async () => (await pay.payments.get(paid.paymentId))?.source === 'webhook' || undefined);
    proceed();
    const report = await sweep;
    expect(report.changed).toEqual([{ paymentId: paid.paymentId, orderId: 'sweep-webhook', from: 'processing', to: 'succeeded', outcome: 'confirmed', source: 'webhook' }]);
  });

  it('looks at every unresolved payment after the wall clock stepped back (olderThanMs 0 is every one), and refuses a bad budgetMs before any poll', async () => {
    let offset = 0;
    const pay = payFor(sb, { logger, now: () => Date.now() + offset });
    sb.payments.setConfirmDelay(Infinity);
    const paid = await card(pay, sb.testCards.succeeds, { amount: 700, currency: 'EUR', orderId: 'sweep-clock' });
    await pay.payments.reconcile(paid.paymentId, { budgetMs: 0 }); // processing: unresolved in the ledger
    sb.payments.setStatus(paid.paymentId, 'succeeded'); // its webhook lost
    offset = -5_000; // an NTP step back
    const report = await pay.payments.reconcilePending();
    expect(report).toMatchObject({ checked: 1, complete: true });
    expect(report.changed).toEqual([expect.objectContaining({ paymentId: paid.paymentId, to: 'succeeded', outcome: 'confirmed' })]);

    const refused = await rejection(pay.payments.reconcilePending({ budgetMs: -1 }));
    expect([refused.code, refused.details]).toEqual(['INVALID_INPUT', { field: 'budgetMs' }]);
  });

  it('forgets an id the service does not know once it answers, when nothing was ever learned of it (a page made it up during an outage); later sweeps stop asking', async () => {
    const pay = payFor(sb, { logger });
    const real = await payByBank(pay, sb, { amount: 800, currency: 'EUR', orderId: 'sweep-outage' });
    secrets.push(real.clientToken);
    sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', status: 503, body: '{"error":"down"}', times: Infinity });
    for (const id of [real.paymentId, 'pay_made_up']) {
      expect(await pay.payments.reconcile(id, { budgetMs: 0 })).toMatchObject({ status: null, outcome: 'needs_reconciliation' });
    }
    sb.faults.clear();

    const report = await pay.payments.reconcilePending();
    expect(report).toMatchObject({ checked: 2, forgotten: ['pay_made_up'], unresolved: [real.paymentId] });
    expect(report.errors).toEqual([{ paymentId: 'pay_made_up', code: 'PAYMENT_NOT_FOUND', message: expect.stringContaining('pay_made_up') }]);
    expect(await pay.payments.get('pay_made_up')).toBeUndefined();
    expect(await pay.payments.get(real.paymentId)).toMatchObject({ status: 'pending', outcome: 'unresolved' });
    expect(logger.text()).toContain('does not know some payment ids');

    const again = await pay.payments.reconcilePending();
    expect(again).toMatchObject({ checked: 1, forgotten: [], errors: [] });
  });

  it('two overlapping sweeps report a status learned by a poll once: the sweep whose poll learned it', async () => {
    const pay = payFor(sb, { logger });
    sb.payments.setConfirmDelay(Infinity);
    const paid = await card(pay, sb.testCards.succeeds, { amount: 900, currency: 'EUR', orderId: 'sweep-twice' });
    await pay.payments.reconcile(paid.paymentId, { budgetMs: 0 }); // processing: unresolved in the ledger
    sb.payments.setStatus(paid.paymentId, 'succeeded');
    const reports = await Promise.all([pay.payments.reconcilePending(), pay.payments.reconcilePending()]);
    expect(reports.map((r) => r.checked)).toEqual([1, 1]);
    expect(reports.flatMap((r) => r.changed)).toEqual([{ paymentId: paid.paymentId, orderId: 'sweep-twice', from: 'processing', to: 'succeeded', outcome: 'confirmed', source: 'poll' }]);
    // A webhook handler arriving later can tell: the ledger says a poll learned it first.
    expect(await pay.payments.get(paid.paymentId)).toMatchObject({ outcome: 'confirmed', source: 'poll' });
  });

  it('leaves a confirmation to the sweep whose poll learned it, though a poll of its own moved the payment before', async () => {
    // Polls a second apart at least: the other sweep polls in between.
    const pay = payFor(sb, { logger, payments: { pollIntervalMs: 2_000, pollMaxIntervalMs: 2_000 } });
    sb.payments.setConfirmDelay(Infinity);
    const paid = await card(pay, sb.testCards.succeeds, { amount: 900, currency: 'EUR', orderId: 'sweep-sideways' });
    await pay.payments.reconcile(paid.paymentId, { budgetMs: 0 }); // processing: unresolved in the ledger
    sb.payments.setStatus(paid.paymentId, 'requires_action');
    const toldFirst: SweepChange[] = [];
    const first = pay.payments.reconcilePending({ budgetMs: 5_000, onChange: (change) => void toldFirst.push(change) });
    await eventually(async () => (await pay.payments.get(paid.paymentId))?.status === 'requires_action', 3_000, 'the first sweep\'s poll');
    sb.payments.setStatus(paid.paymentId, 'succeeded');
    const second = await pay.payments.reconcilePending();
    expect(second.changed).toEqual([{ paymentId: paid.paymentId, orderId: 'sweep-sideways', from: 'requires_action', to: 'succeeded', outcome: 'confirmed', source: 'poll' }]);
    // The first sweep's next poll finds the confirmation already recorded: not its own to report (nor, now stale, its move to requires_action).
    const firstReport = await first;
    expect([firstReport.checked, firstReport.changed, toldFirst]).toEqual([1, [], []]);
  });

  it('forgets nothing on a 404 page that is not the service\'s (PAY_API_URL pointing at another server), and says which URL to check', async () => {
    const pay = payFor(sb, { logger });
    sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', status: 503, body: '{"error":"down"}', times: Infinity });
    expect(await pay.payments.reconcile('pay_behind_a_page', { budgetMs: 0 })).toMatchObject({ status: null });
    sb.faults.clear();
    sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', status: 404, headers: { 'content-type': 'text/html' }, body: '<!DOCTYPE html><pre>Cannot GET /api/v1/payments/pay_behind_a_page/status</pre>', times: Infinity });
    const report = await pay.payments.reconcilePending();
    sb.faults.clear();
    expect(report).toMatchObject({ forgotten: [], unresolved: ['pay_behind_a_page'] });
    expect(report.errors).toEqual([{ paymentId: 'pay_behind_a_page', code: 'UPSTREAM_INVALID_RESPONSE', message: expect.stringContaining('not the payment service\'s error (no "error" in it): check PAY_API_URL') }]);
    expect(await pay.payments.get('pay_behind_a_page')).toMatchObject({ outcome: 'unresolved' });
    // Another service's JSON 404 (PAY_API_URL naming the commerce platform, or a gateway's) is no answer of the service's either.
    for (const body of ['{"message":"Request does not match any route."}', '{"message":"Not Found"}', '{}']) {
      sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', status: 404, headers: { 'content-type': 'application/json' }, body, times: Infinity });
      const other = await pay.payments.reconcilePending();
      sb.faults.clear();
      expect(other).toMatchObject({ forgotten: [], unresolved: ['pay_behind_a_page'] });
      expect(other.errors[0]?.code).toBe('UPSTREAM_INVALID_RESPONSE');
    }
    // The service's own JSON answer still means "unknown".
    expect((await pay.payments.reconcilePending()).forgotten).toEqual(['pay_behind_a_page']);
  });

  it('tells onChange of each change as it finds it, so a sweep stopped part-way has acted on what it found; a throwing onChange stops the sweep', async () => {
    const pay = payFor(sb, { logger });
    sb.payments.setConfirmDelay(Infinity);
    const paid: string[] = [];
    for (let i = 0; i < 3; i++) {
      const payment = await card(pay, sb.testCards.succeeds, { amount: 100 + i, currency: 'EUR', orderId: `sweep-told-${i}` });
      await pay.payments.reconcile(payment.paymentId, { budgetMs: 0 }); // processing: unresolved in the ledger
      sb.payments.setStatus(payment.paymentId, 'succeeded');
      paid.push(payment.paymentId);
    }
    const told: SweepChange[] = [];
    const failure = new Error('the fulfilment database is down');
    const error = await pay.payments.reconcilePending({
      concurrency: 1,
      onChange: async (change) => {
        told.push(change);
        // Each change is told before the next payment is polled.
        expect((await Promise.all(paid.map((id) => pay.payments.get(id)))).filter((entry) => entry?.outcome === 'confirmed')).toHaveLength(told.length);
        if (told.length === 2) throw failure;
      },
    }).then(() => undefined, (e: unknown) => e);
    expect(error).toBe(failure);
    expect(told).toEqual([0, 1].map((i) => expect.objectContaining({ orderId: `sweep-told-${i}`, to: 'succeeded', outcome: 'confirmed', source: 'poll' })));
    // The payment after the failure was not polled: the next sweep finds it.
    const next = await pay.payments.reconcilePending({ onChange: (change) => void told.push(change) });
    expect(next.changed.map((change) => change.orderId)).toEqual(['sweep-told-2']);
    expect(told.map((change) => change.orderId)).toEqual(['sweep-told-0', 'sweep-told-1', 'sweep-told-2']);
  });

  it('checks its options', async () => {
    const pay = payFor(sb, { logger });
    expect((await rejection(pay.payments.reconcilePending({ concurrency: 0 }))).code).toBe('INVALID_INPUT');
    expect((await rejection(pay.payments.reconcilePending({ olderThanMs: -1 }))).code).toBe('INVALID_INPUT');
    expect(await rejection(pay.payments.reconcilePending(null as never))).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'options' } });
    // Refused before any poll: failing on the first change would lose it for good.
    expect((await rejection(pay.payments.reconcilePending({ onChange: 'notify' as never }))).details).toEqual({ field: 'onChange' });
  });
});

// After every test, in whatever order (or selection, -t) they ran: the secrets check reads what all of them logged and threw.
afterAll(() => {
  const texts = [logger.text(), ...errors.flatMap((e) => [String(e), JSON.stringify(e), inspect(e, { depth: 10, showHidden: true }), JSON.stringify((e as PayError).toResponse())])];
  for (const text of texts) for (const secret of secrets) expect(text, 'no client token, API key or signing secret in any log line or error').not.toContain(secret);
});

/** The payment routes (src/core/routes/payments.ts): POST /payments/:paymentId/reconcile and GET /payments/:paymentId. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HookRequest, Pay, PayResponse } from 'paywidget-server';
import { startSandbox, type Sandbox } from 'paywidget-server/sandbox';
import { captureLogger } from '../../helpers/capture-logger.js';
import { bodyText, payByBank, payByCard, payFor, serve } from '../payments/helpers.js';

let sb: Sandbox;
const logger = captureLogger();
const answers: string[] = [];
const tokens: string[] = [];

beforeAll(async () => {
  sb = await startSandbox();
});
afterAll(() => sb.close());

/** The fields these tests read from an answer. */
interface Answer {
  [field: string]: unknown;
  error: { code: string; details?: unknown };
  first_seen_at: string;
}

async function call(pay: Pay, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = (await pay.handle({
    method,
    path,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { rawBody: typeof body === 'string' ? body : JSON.stringify(body) }),
  })) as PayResponse;
  const text = bodyText(response);
  answers.push(text, JSON.stringify(response.headers));
  return { status: response.status, headers: response.headers, text, json: JSON.parse(text) as Answer };
}

describe('POST /payments/:paymentId/reconcile', () => {
  it('answers the outcome, using the payment_client_token from the body, and never echoes it', async () => {
    const pay = payFor(sb, { logger, payment: { apiUrl: sb.paymentUrl, merchantId: sb.merchantId, apiKey: 'sk_test_wrong_on_purpose', webhookSecret: sb.webhookSecret } });
    const { paymentId, clientToken } = await payByCard(payFor(sb), sb, sb.testCards.succeeds, { amount: 2500, currency: 'EUR', orderId: '000000201' });
    tokens.push(clientToken);
    const answer = await call(pay, 'POST', `/payments/${paymentId}/reconcile`, { payment_client_token: clientToken });
    expect(answer.status).toBe(200);
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.json).toEqual({ payment_id: paymentId, status: 'succeeded', outcome: 'confirmed', source: 'poll', order_id: '000000201', amount: 2500, currency: 'EUR' });
  });

  it('answers needs_reconciliation (200) for a payment still pending at the end of the budget', async () => {
    const pay = payFor(sb, { logger, payments: { pollBudgetMs: 100 } });
    const { paymentId, clientToken } = await payByBank(pay, sb);
    tokens.push(clientToken);
    const answer = await call(pay, 'POST', `/payments/${paymentId}/reconcile`, {});
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ payment_id: paymentId, status: 'pending', outcome: 'needs_reconciliation' });
  });

  it('passes on the payment service\'s Retry-After when it rate-limits the polls past the budget', async () => {
    const pay = payFor(sb, { logger, payments: { pollBudgetMs: 2_000 } });
    const { paymentId, clientToken } = await payByBank(pay, sb);
    tokens.push(clientToken);
    const limited = sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', status: 429, headers: { 'Retry-After': '30' }, body: '{"error":"slow down"}', times: Infinity });
    try {
      const answer = await call(pay, 'POST', `/payments/${paymentId}/reconcile`, {});
      expect([answer.status, answer.json.outcome, answer.headers['retry-after']]).toEqual([200, 'needs_reconciliation', '30']);
      expect(sb.faults.list().find((f) => f.id === limited)!.hits).toBe(1);
    } finally {
      sb.faults.clear();
    }
  });

  it('answers failed for a declined card; 404 for a payment the service does not know; 400 for bad input', async () => {
    const pay = payFor(sb, { logger });
    const { paymentId, clientToken } = await payByCard(pay, sb, sb.testCards.declines);
    tokens.push(clientToken);
    expect((await call(pay, 'POST', `/payments/${paymentId}/reconcile`)).json).toMatchObject({ outcome: 'failed', status: 'declined' });

    const unknown = await call(pay, 'POST', '/payments/pay_nobody/reconcile');
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.code).toBe('PAYMENT_NOT_FOUND');

    const badJson = await call(pay, 'POST', `/payments/${paymentId}/reconcile`, '{"payment_client_token":');
    expect(badJson.status).toBe(400);
    expect(badJson.json.error.code).toBe('INVALID_JSON');
    const badToken = await call(pay, 'POST', `/payments/${paymentId}/reconcile`, { payment_client_token: 42 });
    expect(badToken.status).toBe(400);
    expect(badToken.json.error).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'payment_client_token' } });
    // A token no Bearer header can carry is bad input, refused before any call: not an unreachable service
    // polled for the whole budget, nor an unresolved ledger entry under an id nobody paid.
    for (const unusable of ['x\u2603', 'two words', 'line\nbreak', 'x'.repeat(4097)]) {
      const refused = await call(pay, 'POST', '/payments/pay_nobody/reconcile', { payment_client_token: unusable });
      expect([refused.status, refused.json.error]).toMatchObject([400, { code: 'INVALID_INPUT', details: { field: 'payment_client_token' } }]);
      expect(refused.text).not.toContain(unusable.slice(0, 8));
      await expect(pay.payments.status('pay_nobody', { clientToken: unusable })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'clientToken' } });
      await expect(pay.payments.reconcile('pay_nobody', { clientToken: unusable })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    }
    expect((await call(pay, 'GET', '/payments/pay_nobody')).status).toBe(404);
    const badId = await call(pay, 'POST', '/payments/a%2Fb/reconcile');
    expect(badId.json.error).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'paymentId' } });
    // `.` and `..` survive encodeURIComponent, and the status URL would resolve them to another endpoint of the service.
    for (const dots of ['%2e%2e', '%2E', '..']) {
      const refused = await call(pay, 'POST', `/payments/${dots}/reconcile`);
      expect([dots, refused.status, refused.json.error.code]).toEqual([dots, 400, 'INVALID_INPUT']);
      expect((await call(pay, 'GET', `/payments/${dots}`)).status).toBe(400);
    }
    await expect(pay.payments.status('..')).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    // Not percent-encoding: taken as it is, %ZZ would be the id %ZZ (sent on as %25ZZ), the one %25ZZ names.
    for (const malformed of ['%ZZ', '%E2%82', 'pay_%']) {
      for (const [method, path] of [['POST', `/payments/${malformed}/reconcile`], ['GET', `/payments/${malformed}`]] as const) {
        const refused = await call(pay, method, path);
        expect([path, refused.status, refused.json.error]).toMatchObject([path, 400, { code: 'INVALID_INPUT', details: { field: 'paymentId' }, message: expect.stringContaining('not valid percent-encoding') }]);
      }
    }
    expect((await call(pay, 'GET', `/payments/${paymentId}/reconcile`)).status).toBe(405);
  });

  it('answers failed for a payment the ledger holds as failed when the service cannot be asked again: no token, a refused one, an outage; one attempt each', async () => {
    const pay = payFor(sb, { logger, payments: { statusAuth: 'client-token' } });
    const declined = await payByCard(pay, sb, sb.testCards.declines);
    const other = await payByCard(pay, sb, sb.testCards.succeeds);
    tokens.push(declined.clientToken, other.clientToken);
    const path = `/payments/${declined.paymentId}/reconcile`;
    expect((await call(pay, 'POST', path, { payment_client_token: declined.clientToken })).json).toMatchObject({ outcome: 'failed', status: 'declined' });

    const failed = async (body?: unknown) => {
      const answer = await call(pay, 'POST', path, body);
      expect([answer.status, answer.json.outcome, answer.json.status]).toEqual([200, 'failed', 'declined']);
    };
    await failed(); // no token: nothing to ask with under statusAuth 'client-token'
    await failed({ payment_client_token: other.clientToken }); // the service refuses another payment's token (401)
    const down = sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', status: 503, body: '{"error":"down"}', times: Infinity });
    try {
      await failed({ payment_client_token: declined.clientToken });
      expect(sb.faults.list().find((f) => f.id === down)!.hits).toBe(1); // one attempt, no retries, no poll budget
    } finally {
      sb.faults.clear();
    }
  });

  it("passes the service's refusal of a wrong client token through without the token", async () => {
    const pay = payFor(sb, { logger });
    const a = await payByCard(pay, sb, sb.testCards.succeeds);
    const b = await payByCard(pay, sb, sb.testCards.succeeds);
    tokens.push(a.clientToken, b.clientToken);
    const answer = await call(pay, 'POST', `/payments/${a.paymentId}/reconcile`, { payment_client_token: b.clientToken });
    expect(answer.status).toBe(401);
    expect(answer.json.error.code).toBe('invalid_token');
  });
});

describe('GET /payments/:paymentId', () => {
  it('answers what the ledger knows, 404 before anything is known, without calling the service', async () => {
    const pay = payFor(sb, { logger });
    const { paymentId, clientToken } = await payByCard(pay, sb, sb.testCards.succeeds, { amount: 990, currency: 'USD', orderId: '000000202' });
    tokens.push(clientToken);

    const before = await call(pay, 'GET', `/payments/${paymentId}`);
    expect(before.status).toBe(404);
    expect(before.json.error.code).toBe('PAYMENT_NOT_FOUND');
    // A 404 is cacheable by default: a cached one would hide the payment once it is known.
    expect(before.headers['cache-control']).toBe('no-store');
    // The library may be mounted anywhere: the route it points to is named below that mount, not as a path of the site.
    expect((before.json.error as { message?: string }).message).toContain(`POST …/payments/${paymentId}/reconcile (under the path the library is mounted at)`);

    await pay.payments.reconcile(paymentId, { clientToken });
    sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', status: 500, times: Infinity });
    const after = await call(pay, 'GET', `/payments/${paymentId}`);
    sb.faults.clear();
    expect(after.status).toBe(200);
    expect(after.json).toEqual({
      payment_id: paymentId, status: 'succeeded', outcome: 'confirmed', source: 'poll', order_id: '000000202', amount: 990, currency: 'USD',
      first_seen_at: expect.any(String), updated_at: expect.any(String),
    });
    expect(Date.parse(after.json.first_seen_at)).toBeLessThanOrEqual(Date.now());
    expect((await call(pay, 'POST', `/payments/${paymentId}`)).status).toBe(405);
  });

  it('answers source null while nothing was learned, as the reconcile route does', async () => {
    const pay = payFor(sb, { logger });
    const { paymentId, clientToken } = await payByCard(pay, sb, sb.testCards.succeeds);
    tokens.push(clientToken);
    sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', status: 500, times: Infinity });
    const reconciled = await call(pay, 'POST', `/payments/${paymentId}/reconcile`, { payment_client_token: clientToken });
    const read = await call(pay, 'GET', `/payments/${paymentId}`);
    sb.faults.clear();
    expect(reconciled.json).toMatchObject({ status: null, source: null, outcome: 'needs_reconciliation' });
    expect(read.json).toMatchObject({ status: null, source: null, outcome: 'unresolved' });
  });

  it('also answers over real HTTP', async () => {
    const pay = payFor(sb, { logger });
    const server = await serve(pay);
    try {
      const { paymentId, clientToken } = await payByCard(pay, sb, sb.testCards.succeeds);
      tokens.push(clientToken);
      const reconciled = await fetch(`${server.base}/payments/${paymentId}/reconcile`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ payment_client_token: clientToken }) });
      expect(reconciled.status).toBe(200);
      const text = await reconciled.text();
      answers.push(text);
      expect(JSON.parse(text)).toMatchObject({ outcome: 'confirmed' });
      const read = await fetch(`${server.base}/payments/${paymentId}`);
      expect(read.status).toBe(200);
      expect(await read.json()).toMatchObject({ payment_id: paymentId, outcome: 'confirmed' });
    } finally {
      await server.close();
    }
  });
});

describe('authorize', () => {
  it('guards both routes with the same hook as minting: false answers 401 before anything runs', async () => {
    const seen: HookRequest[] = [];
    const pay = payFor(sb, {
      logger,
      authorize: (request) => {
        seen.push(request);
        return request.headers['x-session' as never] === 'ok';
      },
    });
    const { paymentId, clientToken } = await payByCard(pay, sb, sb.testCards.succeeds);
    tokens.push(clientToken);
    sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', status: 500, times: Infinity });
    const refusedPost = await call(pay, 'POST', `/payments/${paymentId}/reconcile`, { payment_client_token: clientToken });
    const refusedGet = await call(pay, 'GET', `/payments/${paymentId}`);
    expect(sb.faults.list()[0]!.hits).toBe(0); // the service was never called
    sb.faults.clear();
    for (const refused of [refusedPost, refusedGet]) {
      expect(refused.status).toBe(401);
      expect(refused.json.error.code).toBe('UNAUTHORIZED');
    }
    expect(await pay.payments.get(paymentId)).toBeUndefined();
    expect(seen.map((r) => [r.method, r.path])).toEqual([['POST', `/payments/${paymentId}/reconcile`], ['GET', `/payments/${paymentId}`]]);
    expect(seen[0]!.body).toEqual({ payment_client_token: clientToken });

    const allowed = await call(pay, 'POST', `/payments/${paymentId}/reconcile`, { payment_client_token: clientToken }, { 'x-session': 'ok' });
    expect(allowed.status).toBe(200);
    expect((await call(pay, 'GET', `/payments/${paymentId}`, undefined, { 'x-session': 'ok' })).status).toBe(200);
  });

  it.each([
    ['a string', 'no'],
    ['a number', 1],
    ['an object', { userId: 'u1' }],
  ])('lets no one in when the hook answers %s instead of true or false, and says so (500 CONFIG_INVALID)', async (kind, verdict) => {
    const pay = payFor(sb, { logger, authorize: () => verdict as never });
    const answer = await call(pay, 'GET', '/payments/pay_anything');
    expect(answer.status).toBe(500);
    expect(answer.json.error).toMatchObject({ code: 'CONFIG_INVALID', message: `paywidget-server configuration: the authorize hook returned ${kind}; return true to let the request through, or false to refuse it (401).` });
  });
});

describe('secrets', () => {
  it('no client token or API key in any answer or log line', () => {
    expect(tokens.length).toBeGreaterThan(5);
    const texts = [...answers, logger.text()];
    for (const text of texts) for (const secret of [...tokens, sb.apiKey, sb.webhookSecret]) expect(text).not.toContain(secret);
  });
});

describe('a ledger store that is down', () => {
  it('answers 503 STORE_UNAVAILABLE and logs the failure once, with the payment id it was for', async () => {
    const own = captureLogger();
    const down = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6379'));
    const ledger = { get: down, record: down, byOrder: down, forget: down, list: () => ({ [Symbol.asyncIterator]: () => ({ next: down }) }) };
    const pay = payFor(sb, { logger: own, stores: { ledger } });
    const answer = await call(pay, 'GET', '/payments/pay_while_down');
    expect(answer.status).toBe(503);
    expect(answer.json.error.code).toBe('STORE_UNAVAILABLE');
    const errors = own.lines.map((line) => JSON.parse(line) as { level: string }).filter((line) => line.level === 'error');
    expect(errors).toEqual([expect.objectContaining({ paymentId: 'pay_while_down', err: expect.objectContaining({ message: expect.stringContaining('ECONNREFUSED') }) })]);
  });
});

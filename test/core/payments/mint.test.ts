import { inspect } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPay, UpstreamError, type Pay, type PayOptions } from 'paywidget-server';
import { startSandbox, type Sandbox } from 'paywidget-server/sandbox';
import { captureLogger } from '../../helpers/capture-logger.js';
import { freePort as closedPort } from '../../helpers/free-port.js';
import { startLocalServer } from '../../helpers/local-server.js';
import { rejection } from '../../helpers/pay-errors.js';

let sandbox: Sandbox;
const logger = captureLogger();

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());
afterEach(() => sandbox.faults.clear());

function payFor(overrides: Partial<PayOptions> = {}): Pay {
  return createPay({
    env: {},
    payment: { apiUrl: sandbox.paymentUrl, merchantId: sandbox.merchantId, apiKey: sandbox.apiKey, webhookSecret: sandbox.webhookSecret },
    http: { attemptTimeoutMs: 500, totalTimeoutMs: 3_000, backoffBaseMs: 10, maxRetries: 2 },
    logger,
    ...overrides,
  });
}

async function mintRoute(pay: Pay, body: unknown = { orderId: 'order-1' }) {
  const response = await pay.handle({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json' }, rawBody: JSON.stringify(body) });
  if (!response) throw new Error('the route did not answer');
  const text = typeof response.body === 'string' ? response.body : Buffer.from(response.body).toString('utf8');
  return { ...response, text };
}

describe('mintWidgetToken against the sandbox', () => {
  it('mints a token that the sandbox accepts, valid 15 minutes', async () => {
    const before = Date.now();
    const token = await payFor().mintWidgetToken({ amount: 1999, currency: 'EUR', orderId: 'order-1' });
    expect(token.widgetToken).toMatch(/^wt_/);
    expect(token.expiresAt.getTime() - before).toBeGreaterThan(14 * 60_000);
    expect(token.expiresAt.getTime() - before).toBeLessThanOrEqual(15 * 60_000 + 2_000);
    const lookup = await fetch(`${sandbox.paymentUrl}/api/v1/checkout/lookup`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ widget_token: token.widgetToken }),
    });
    expect(lookup.status).toBe(200);
    expect(await lookup.json()).toMatchObject({ order: { order_id: 'order-1', amount: 1999, currency: 'EUR' } });
  });

  it.each([
    [{ amount: 0, currency: 'EUR', orderId: 'o' }, 'amount'],
    [{ amount: -5, currency: 'EUR', orderId: 'o' }, 'amount'],
    [{ amount: 19.99, currency: 'EUR', orderId: 'o' }, 'amount'],
    [{ amount: Number.MAX_SAFE_INTEGER + 1, currency: 'EUR', orderId: 'o' }, 'amount'],
    [{ amount: '1999', currency: 'EUR', orderId: 'o' }, 'amount'],
    [{ amount: 100, currency: 'eur', orderId: 'o' }, 'currency'],
    [{ amount: 100, currency: 'ABC', orderId: 'o' }, 'currency'],
    [{ amount: 100, currency: undefined, orderId: 'o' }, 'currency'],
    [{ amount: 100, currency: 'EUR', orderId: '' }, 'orderId'],
    [{ amount: 100, currency: 'EUR', orderId: '   ' }, 'orderId'],
    [{ amount: 100, currency: 'EUR', orderId: 42 }, 'orderId'],
    // Half a surrogate pair: no UTF-8 encoding, so the ledger (in Redis) could not file payments under it.
    [{ amount: 100, currency: 'EUR', orderId: 'order-\ud800' }, 'orderId'],
  ])('refuses %o before any call, naming %s', async (input, field) => {
    sandbox.faults.inject({ route: 'POST /api/v1/checkout/init', times: Infinity, status: 500 });
    const error = await rejection(payFor().mintWidgetToken(input as never));
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.status).toBe(400);
    expect(error.details).toEqual({ field });
    expect(error.message).toContain(field);
    expect(sandbox.faults.list()[0]?.hits).toBe(0);
  });

  it('passes a 404 on unchanged, and logs that PAY_API_URL is to be checked', async () => {
    sandbox.faults.inject({ route: 'POST /api/v1/checkout/init', status: 404, headers: { 'content-type': 'text/html' }, body: '<pre>Cannot POST</pre>', times: 1 });
    const error = await rejection(payFor().mintWidgetToken({ amount: 500, currency: 'USD', orderId: 'o-404' }));
    expect(error).toBeInstanceOf(UpstreamError);
    expect([error.status, (error as UpstreamError).bodyText]).toEqual([404, '<pre>Cannot POST</pre>']);
    expect(logger.text()).toContain('the mint call was answered 404: check PAY_API_URL');
  });

  it('refuses a redirect as an invalid answer (not passed on as a refusal without its Location), not retried', async () => {
    const moved = sandbox.faults.inject({ route: 'POST /api/v1/checkout/init', status: 302, headers: { Location: '/v2/checkout/init' }, body: '<html>moved</html>', times: Infinity });
    const error = await rejection(payFor().mintWidgetToken({ amount: 500, currency: 'USD', orderId: 'o-302' }));
    expect(error).not.toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ code: 'UPSTREAM_INVALID_RESPONSE', status: 502 });
    expect(error.message).toContain(`redirect (HTTP 302) to ${sandbox.paymentUrl}/v2/checkout/init`);
    // Not this API's path: no base URL to offer, but what may stand in front of the service.
    expect(error.message).toMatch(/it does not point to this API's paths \(\/api\/v1\/…\): a proxy, a login page or another version of the API may answer there\. Set PAY_API_URL \(payment\.apiUrl\) to the service's own base URL\.$/);
    expect(sandbox.faults.list().find((f) => f.id === moved)!.hits).toBe(1);
  });

  it('names a redirect\'s target without the API key a gateway put in its path', async () => {
    sandbox.faults.inject({ route: 'POST /api/v1/checkout/init', status: 302, headers: { Location: `/gateway/denied/${sandbox.apiKey}` }, body: '', times: 1 });
    const error = await rejection(payFor().mintWidgetToken({ amount: 500, currency: 'USD', orderId: 'o-302-key' }));
    expect(error.message).toContain(`redirect (HTTP 302) to ${sandbox.paymentUrl}/gateway/denied/[redacted]`);
    expect(error.message).not.toContain(sandbox.apiKey);
  });

  it('believes an expires_at only when it is an ISO time a fresh token can have; else 15 minutes from now', async () => {
    const expiryFor = async (expires: string) => {
      sandbox.faults.inject({ route: 'POST /api/v1/checkout/init', status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ widget_token: 'wt_x', expires_at: expires }), times: 1 });
      const before = Date.now();
      const token = await payFor().mintWidgetToken({ amount: 500, currency: 'USD', orderId: 'o-exp' });
      return token.expiresAt.getTime() - before;
    };
    const inTenMinutes = new Date(Date.now() + 10 * 60_000).toISOString();
    expect(Math.abs((await expiryFor(inTenMinutes)) - 10 * 60_000)).toBeLessThan(2_000);
    // "1" (Date.parse: 2001), a time already past, a lifetime of a day, and no time at all.
    for (const junk of ['1', new Date(Date.now() - 60_000).toISOString(), new Date(Date.now() + 86_400_000).toISOString(), 'soon']) {
      const ms = await expiryFor(junk);
      expect([junk, ms > 14 * 60_000 && ms <= 15 * 60_000 + 2_000]).toEqual([junk, true]);
    }
  });

  it('retries a 503 (the service did not act) and then succeeds', async () => {
    sandbox.faults.inject({ route: 'POST /api/v1/checkout/init', status: 503, times: 1 });
    expect(sandbox.faults.list()).toHaveLength(1);
    const token = await payFor().mintWidgetToken({ amount: 500, currency: 'USD', orderId: 'o-503' });
    expect(token.widgetToken).toMatch(/^wt_/);
    expect(sandbox.faults.list()).toHaveLength(0); // the one 503 was served, then the retry succeeded
  });

  // A mint the service may have carried out is not sent again: one click, one token.
  it('does not retry a 500, a 502 or a time-out, after which the service may have minted', async () => {
    for (const status of [500, 502]) {
      sandbox.faults.inject({ route: 'POST /api/v1/checkout/init', status, times: 1 });
      const counter = sandbox.faults.inject({ route: 'POST /api/v1/checkout/init', latencyMs: 1, times: Infinity });
      const error = await rejection(payFor({ http: { backoffBaseMs: 1 } }).mintWidgetToken({ amount: 500, currency: 'USD', orderId: `o-${status}` }));
      expect([status, error.status]).toEqual([status, status]); // the upstream's answer, passed through
      expect(sandbox.faults.list().find((f) => f.id === counter)!.hits).toBe(0);
      sandbox.faults.clear();
    }
    // Served late: the service minted after the client gave up on the attempt.
    sandbox.faults.inject({ route: 'POST /api/v1/checkout/init', latencyMs: 400, times: 1 });
    const counter = sandbox.faults.inject({ route: 'POST /api/v1/checkout/init', latencyMs: 1, times: Infinity });
    const late = await rejection(payFor({ http: { attemptTimeoutMs: 150, backoffBaseMs: 1 } }).mintWidgetToken({ amount: 500, currency: 'USD', orderId: 'o-late' }));
    expect(late.code).toBe('UPSTREAM_TIMEOUT');
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(sandbox.faults.list().find((f) => f.id === counter)!.hits).toBe(0);
  });

  it('honours Retry-After on a 429', async () => {
    sandbox.faults.inject({ route: 'POST /api/v1/checkout/init', status: 429, headers: { 'Retry-After': '1' }, body: '{"error":"slow down"}', times: 1 });
    const started = Date.now();
    const token = await payFor().mintWidgetToken({ amount: 500, currency: 'USD', orderId: 'o-429' });
    expect(token.widgetToken).toMatch(/^wt_/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('passes a 429 through when its Retry-After is past the cap', async () => {
    sandbox.faults.inject({ route: 'POST /api/v1/checkout/init', status: 429, headers: { 'Retry-After': '120' }, body: '{"error":"slow down"}', times: 1 });
    const error = await rejection(payFor().mintWidgetToken({ amount: 500, currency: 'USD', orderId: 'o-429' }));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error.status).toBe(429);
  });

  it('gives up on a hanging service with UPSTREAM_TIMEOUT (504)', async () => {
    sandbox.faults.inject({ route: 'POST /api/v1/checkout/init', hang: true, times: Infinity });
    const pay = payFor({ http: { attemptTimeoutMs: 150, totalTimeoutMs: 600, maxRetries: 5, backoffBaseMs: 10 } });
    const started = Date.now();
    const error = await rejection(pay.mintWidgetToken({ amount: 500, currency: 'USD', orderId: 'o-hang' }));
    expect(error.code).toBe('UPSTREAM_TIMEOUT');
    expect(error.status).toBe(504);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('times out a body that never finishes, not just the headers', async () => {
    sandbox.faults.inject({ route: 'POST /api/v1/checkout/init', latencyMs: 2_000, times: Infinity });
    const pay = payFor({ http: { attemptTimeoutMs: 200, totalTimeoutMs: 500, maxRetries: 0 } });
    const error = await rejection(pay.mintWidgetToken({ amount: 500, currency: 'USD', orderId: 'o-slow' }));
    expect(error.code).toBe('UPSTREAM_TIMEOUT');
  });

  it('reports a refused connection as UPSTREAM_UNREACHABLE (502), after retrying it (nothing was sent)', async () => {
    const port = await closedPort();
    const logger = captureLogger();
    const pay = payFor({ logger, http: { backoffBaseMs: 1 }, payment: { apiUrl: `http://127.0.0.1:${port}`, merchantId: 'm', apiKey: 'sk_unreachable_secret', webhookSecret: 'w' } });
    const error = await rejection(pay.mintWidgetToken({ amount: 500, currency: 'USD', orderId: 'o-refused' }));
    expect(error.code).toBe('UPSTREAM_UNREACHABLE');
    expect(error.status).toBe(502);
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.message).toContain('Check PAY_API_URL (payment.apiUrl) and that the service is up.');
    expect(error.message).not.toContain('sk_unreachable_secret');
    expect(logger.lines.filter((line) => line.includes('"msg":"upstream call failed; retrying"'))).toHaveLength(2);
  });

  it('refuses a 200 whose body is not JSON with UPSTREAM_INVALID_RESPONSE', async () => {
    sandbox.faults.inject({ route: 'POST /api/v1/checkout/init', malformed: true });
    const error = await rejection(payFor().mintWidgetToken({ amount: 500, currency: 'USD', orderId: 'o-garbage' }));
    expect(error.code).toBe('UPSTREAM_INVALID_RESPONSE');
    expect(error.status).toBe(502);
  });

  it('hides the token from JSON.stringify, util.inspect and the edge runtime\'s console', async () => {
    const token = await payFor().mintWidgetToken({ amount: 700, currency: 'EUR', orderId: 'o-hide' });
    expect(token.widgetToken).toMatch(/^wt_/);
    expect(JSON.stringify(token)).not.toContain(token.widgetToken);
    expect(inspect(token, { showHidden: true, depth: 5 })).not.toContain(token.widgetToken);
    expect(JSON.stringify(token)).toContain('[redacted]');
    // The edge runtime's console (Next.js edge routes) lists own properties and calls its own hook.
    const ownValues = Reflect.ownKeys(token).map((key) => String((token as unknown as Record<PropertyKey, unknown>)[key]));
    expect(ownValues.join(' ')).not.toContain(token.widgetToken);
    const edgeView = (token as unknown as Record<symbol, () => unknown>)[Symbol.for('edge-runtime.inspect.custom')]!();
    expect(JSON.stringify(edgeView)).not.toContain(token.widgetToken);
  });
});

describe('POST /widget-token', () => {
  const checkout = { resolveCheckout: ({ body }: { body: unknown }) => ({ amount: 2500, currency: 'EUR', orderId: String((body as { orderId?: string }).orderId) }) };

  it('answers 200 with the token; the amount comes from resolveCheckout, not the body', async () => {
    const response = await mintRoute(payFor(checkout), { orderId: 'order-7', amount: 1 });
    expect(response.status).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    const body = JSON.parse(response.text) as { widget_token: string; expires_at: string };
    expect(body.widget_token).toMatch(/^wt_/);
    expect(Date.parse(body.expires_at)).toBeGreaterThan(Date.now());
    const lookup = await fetch(`${sandbox.paymentUrl}/api/v1/checkout/lookup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ widget_token: body.widget_token }) });
    expect(await lookup.json()).toMatchObject({ order: { order_id: 'order-7', amount: 2500 } });
  });

  it('asks authorize first and answers 401 unless it answers true: a hook that returns nothing keeps the route closed', async () => {
    let resolved = 0;
    for (const answer of [false, undefined, null, 0, '']) {
      const pay = payFor({ authorize: (() => answer) as never, resolveCheckout: () => { resolved++; return { amount: 1, currency: 'EUR', orderId: 'x' }; } });
      const response = await mintRoute(pay);
      expect(response.status).toBe(401);
      expect(JSON.parse(response.text)).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
    }
    const forgotReturn = payFor({ authorize: (async () => {}) as never, resolveCheckout: () => { resolved++; return { amount: 1, currency: 'EUR', orderId: 'x' }; } });
    expect((await mintRoute(forgotReturn)).status).toBe(401);
    expect(resolved).toBe(0);
  });

  it('explains a missing resolveCheckout', async () => {
    const response = await mintRoute(payFor());
    expect(response.status).toBe(500);
    expect(JSON.parse(response.text).error).toMatchObject({ code: 'CHECKOUT_UNRESOLVED' });
    expect(response.text).toContain('resolveCheckout');
  });

  it('answers 400 INVALID_JSON for a malformed body', async () => {
    const response = await payFor(checkout).handle({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json' }, rawBody: '{"orderId":' });
    expect(response?.status).toBe(400);
    expect(JSON.parse(String(response?.body)).error.code).toBe('INVALID_JSON');
  });

  it('answers 500 CHECKOUT_UNRESOLVED naming the field when resolveCheckout returns a bad amount: the hook\'s fault, not the browser\'s', async () => {
    const logger = captureLogger();
    for (const answer of [{ amount: 19.99, currency: 'EUR', orderId: 'o' }, undefined]) {
      const response = await mintRoute(payFor({ logger, resolveCheckout: () => answer as never }));
      expect(response.status).toBe(500);
      expect(JSON.parse(response.text).error).toMatchObject({ code: 'CHECKOUT_UNRESOLVED', message: expect.stringMatching(/^resolveCheckout returned no usable checkout/) });
    }
    expect(JSON.parse((await mintRoute(payFor({ resolveCheckout: () => ({ amount: 19.99, currency: 'EUR', orderId: 'o' }) }))).text).error.details).toEqual({ field: 'amount' });
    expect(logger.lines.map((line) => JSON.parse(line) as { level: string; code?: string }).filter((line) => line.level === 'error' && line.code === 'CHECKOUT_UNRESOLVED')).toHaveLength(2);
  });

  it.each<[string, { apiKey?: string; merchantId?: string }]>([
    ['wrong credentials', { apiKey: 'sk_wrong' }],
    ['an unknown merchant', { merchantId: 'merchant_nobody' }],
  ])('passes the sandbox refusal for %s through unchanged', async (_name, credentials) => {
    const pay = payFor({ ...checkout, payment: { apiUrl: sandbox.paymentUrl, merchantId: sandbox.merchantId, apiKey: sandbox.apiKey, webhookSecret: 'w', ...credentials } });
    const direct = await fetch(`${sandbox.paymentUrl}/api/v1/checkout/init`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-merchant-id': credentials.merchantId ?? sandbox.merchantId, 'x-merchant-api-key': credentials.apiKey ?? sandbox.apiKey },
      body: JSON.stringify({ amount: 2500, currency: 'EUR', order_id: 'order-1' }),
    });
    const response = await mintRoute(pay);
    expect(response.status).toBe(direct.status);
    expect(response.status).toBe(401);
    expect(response.headers['content-type']).toBe(direct.headers.get('content-type'));
    expect(response.text).toBe(await direct.text());
  });

  it('says which settings to check when the service refuses the merchant credentials, in the error and the log but not the answer', async () => {
    const pay = payFor({ ...checkout, payment: { apiUrl: sandbox.paymentUrl, merchantId: sandbox.merchantId, apiKey: 'sk_wrong_key_value', webhookSecret: 'w' } });
    logger.lines.length = 0;
    const error = await pay.mintWidgetToken({ amount: 500, currency: 'EUR', orderId: 'o-creds' }).then(() => undefined, (e: unknown) => e as UpstreamError);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error!.status).toBe(401);
    expect(error!.message).toMatch(/PAY_MERCHANT_ID and PAY_MERCHANT_API_KEY \(payment\.merchantId and payment\.apiKey\)/);
    expect(logger.text()).toMatch(/refused the merchant credentials.*PAY_MERCHANT_API_KEY/);
    expect(`${logger.text()} ${error!.message}`).not.toContain('sk_wrong_key_value');
    // The browser still gets the service's own answer.
    const response = await mintRoute(pay);
    expect(response.text).not.toContain('PAY_MERCHANT');
  });

  it('redacts the credentials from a refusal that echoes the request back (a gateway\'s debug page), and passes the rest unchanged', async () => {
    const echo = await startLocalServer((req, res) => {
      res.writeHead(req.url!.includes('/status') ? 403 : 400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'bad', got: req.headers }));
    });
    try {
      const apiKey = 'sk_live_reflected_0123456789';
      const pay = payFor({ ...checkout, payment: { apiUrl: echo.base, merchantId: 'merchant_echo', apiKey, webhookSecret: 'w' } });
      const response = await mintRoute(pay);
      expect(response.status).toBe(400);
      expect(response.text).not.toContain(apiKey);
      expect(JSON.parse(response.text)).toMatchObject({ error: 'bad', got: { 'x-merchant-api-key': '[redacted]', 'x-merchant-id': 'merchant_echo' } });

      // The status call's credential too: the client token, sent as a Bearer token.
      const clientToken = 'pct_reflected_abcdefghij';
      const refused = await pay.payments.status('pay_echo', { clientToken }).then(() => undefined, (e: unknown) => e as UpstreamError);
      expect(refused).toBeInstanceOf(UpstreamError);
      expect(refused!.bodyText).not.toContain(clientToken);
      expect(JSON.parse(refused!.bodyText)).toMatchObject({ got: { authorization: 'Bearer [redacted]' } });
    } finally {
      await echo.close();
    }
  });

  it('redacts a key echoed as PHP writes JSON (\\/ for /) or percent-encoded, not only byte for byte', async () => {
    const apiKey = 'sk_live_AbC/dEf+GhI/jKl=';
    const echo = await startLocalServer((req, res) => {
      const headers = JSON.stringify({ error: 'bad', got: req.headers }).replaceAll('/', '\\/');
      res.writeHead(400, { 'content-type': 'application/json' }).end(`${headers.slice(0, -1)},"query":"key=${encodeURIComponent(apiKey)}"}`);
    });
    try {
      const response = await mintRoute(payFor({ ...checkout, payment: { apiUrl: echo.base, merchantId: 'merchant_echo', apiKey, webhookSecret: 'w' } }));
      expect(response.status).toBe(400);
      for (const form of [apiKey, apiKey.replaceAll('/', '\\/'), encodeURIComponent(apiKey)]) expect(response.text).not.toContain(form);
      expect(JSON.parse(response.text)).toMatchObject({ error: 'bad', got: { 'x-merchant-api-key': '[redacted]', 'x-merchant-id': 'merchant_echo' }, query: 'key=[redacted]' });
    } finally {
      await echo.close();
    }
  });

  it('passes an amount the service refuses through unchanged', async () => {
    const pay = payFor({ resolveCheckout: () => ({ amount: 2500, currency: 'XAF', orderId: 'o' }) });
    sandbox.faults.inject({ route: 'POST /api/v1/checkout/init', status: 422, headers: { 'content-type': 'application/problem+json' }, body: '{"type":"amount_too_large","detail":"limit 1000"}' });
    const response = await mintRoute(pay);
    expect(response.status).toBe(422);
    expect(response.headers['content-type']).toBe('application/problem+json');
    expect(response.text).toBe('{"type":"amount_too_large","detail":"limit 1000"}');
  });

  it('passes a non-JSON error body (an HTML 503) through byte for byte after the retries', async () => {
    const html = '<html><body>Service Unavailable</body></html>';
    sandbox.faults.inject({ route: 'POST /api/v1/checkout/init', status: 503, headers: { 'content-type': 'text/html' }, body: html, times: Infinity });
    const logged = captureLogger();
    const response = await mintRoute(payFor({ ...checkout, logger: logged }));
    expect(response.status).toBe(503);
    expect(response.headers['content-type']).toBe('text/html');
    expect(response.text).toBe(html);
    expect(sandbox.faults.list()[0]?.hits).toBe(3);
    // The service's own failure, not a refusal of the request: the log says which, and what it answered, once.
    expect(logged.text()).toContain('payment service failed to mint a widget token (its own error, after the retries)');
    expect(logged.lines.filter((line) => JSON.parse(line).level === 'error' || JSON.parse(line).level === 'warn')).toHaveLength(1);
    expect(JSON.parse(logged.lines.find((line) => line.includes('failed to mint'))!)).toMatchObject({ level: 'error', status: 503, answer: html });
  });

  it('logs a 500 on a mint once, with what the service said, and not as retried (a mint is not retried after a 500)', async () => {
    sandbox.faults.inject({ route: 'POST /api/v1/checkout/init', status: 500, headers: { 'content-type': 'application/json' }, body: `{"error":"ledger down","detail":"${'x'.repeat(400)}"}` });
    const logged = captureLogger();
    const response = await mintRoute(payFor({ ...checkout, logger: logged }));
    expect(response.status).toBe(500);
    const said = logged.lines.map((line) => JSON.parse(line) as { level: string; msg: string; answer?: string }).filter((line) => line.level === 'error' || line.level === 'warn');
    expect(said).toHaveLength(1);
    expect(said[0]!.msg).toBe('payment service failed to mint a widget token (its own error)');
    expect(said[0]!.answer).toMatch(/^\{"error":"ledger down","detail":"x+…$/);
    expect(said[0]!.answer!.length).toBe(301);
  });

  it('logs what the service said when it refuses a mint, with its Retry-After', async () => {
    sandbox.faults.inject({ route: 'POST /api/v1/checkout/init', status: 429, headers: { 'content-type': 'application/json', 'retry-after': '30' }, body: '{"error":"slow down"}' });
    const logged = captureLogger();
    const response = await mintRoute(payFor({ ...checkout, logger: logged, http: { maxRetries: 0 } }));
    expect(response.status).toBe(429);
    expect(logged.lines.map((line) => JSON.parse(line) as object)).toContainEqual(expect.objectContaining({ level: 'warn', status: 429, answer: '{"error":"slow down"}', retryAfter: '30' }));
  });

  it('answers 504 with a JSON error on a time-out and 502 when unreachable', async () => {
    sandbox.faults.inject({ route: 'POST /api/v1/checkout/init', hang: true, times: Infinity });
    const slow = await mintRoute(payFor({ ...checkout, http: { attemptTimeoutMs: 100, totalTimeoutMs: 300, maxRetries: 1, backoffBaseMs: 10 } }));
    expect(slow.status).toBe(504);
    expect(JSON.parse(slow.text).error.code).toBe('UPSTREAM_TIMEOUT');

    const port = await closedPort();
    const gone = await mintRoute(payFor({ ...checkout, payment: { apiUrl: `http://127.0.0.1:${port}`, merchantId: 'm', apiKey: 'sk_gone_secret', webhookSecret: 'whsec_gone' } }));
    expect(gone.status).toBe(502);
    expect(JSON.parse(gone.text).error.code).toBe('UPSTREAM_UNREACHABLE');
    expect(gone.text).not.toContain('sk_gone_secret');
  });
});

describe('secrets', () => {
  it('never appear in log lines, error texts or serialized errors', async () => {
    const secrets = [sandbox.apiKey, sandbox.webhookSecret];
    const pay = payFor({ resolveCheckout: () => ({ amount: 100, currency: 'EUR', orderId: 'o-secret' }) });
    const texts: string[] = [];
    const ok = await mintRoute(pay);
    const token = JSON.parse(ok.text).widget_token as string;
    secrets.push(token);
    sandbox.faults.inject({ route: 'POST /api/v1/checkout/init', status: 500, times: Infinity });
    const error = await rejection(pay.mintWidgetToken({ amount: 100, currency: 'EUR', orderId: 'o' }));
    texts.push(error.message, error.stack ?? '', JSON.stringify(error), inspect(error, { depth: 10, showHidden: true }), JSON.stringify(error.toResponse()));
    texts.push(logger.text(), inspect(pay, { depth: 10, showHidden: true }), JSON.stringify(pay.config));
    expect(logger.lines.length).toBeGreaterThan(0);
    for (const text of texts) for (const secret of secrets) expect(text).not.toContain(secret);
  });
});

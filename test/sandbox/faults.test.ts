import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { call, merchantHeaders, mint, ORDER } from './helpers.js';
import { eventually } from '../helpers/eventually.js';

let sb: Sandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

const initUrl = (s: Sandbox) => `${s.paymentUrl}/api/v1/checkout/init`;
const mintCall = (s: Sandbox) => call(initUrl(s), { body: ORDER, headers: merchantHeaders(s) });

describe('sandbox: fault injection', () => {
  it('a 500 once, then normal service', async () => {
    sb = await startSandbox();
    sb.faults.inject({ route: 'POST /api/v1/checkout/init', status: 500 });
    const failed = await mintCall(sb);
    expect([failed.status, failed.json.error.code]).toEqual([500, 'injected_fault']);
    expect((await mintCall(sb)).status).toBe(201);
    expect(sb.faults.list()).toEqual([]);
  });

  it('a 429 with Retry-After, twice, only on the matching route', async () => {
    sb = await startSandbox();
    const id = sb.faults.inject({ route: '/api/v1/checkout/init', times: 2, status: 429, headers: { 'Retry-After': '1' } });
    expect(sb.faults.list()).toEqual([{ id, rule: expect.objectContaining({ status: 429 }), remaining: 2, hits: 0 }]);
    await expect(mint(sb)).rejects.toThrow(/^mint failed: 429 /);
    expect(sb.faults.list()).toEqual([{ id, rule: expect.objectContaining({ status: 429 }), remaining: 1, hits: 1 }]);
    const lookup = await call(`${sb.paymentUrl}/api/v1/checkout/lookup`, { body: {} });
    expect(lookup.status).toBe(401); // other routes unaffected
    const limited = await mintCall(sb);
    expect([limited.status, limited.headers.get('retry-after')]).toEqual([429, '1']);
    expect((await mintCall(sb)).status).toBe(201);
  });

  it('route patterns match path parameters and methods', async () => {
    sb = await startSandbox();
    sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', times: Infinity, status: 502 });
    expect((await call(`${sb.paymentUrl}/api/v1/payments/pay_a/status`)).status).toBe(502);
    expect((await call(`${sb.paymentUrl}/api/v1/payments/pay_b/status`)).status).toBe(502);
    expect((await mintCall(sb)).status).toBe(201);
    expect(sb.faults.list()[0]).toMatchObject({ remaining: Infinity, hits: 2 });
    expect(() => sb!.faults.inject({ status: 99 })).toThrow(TypeError);
    // A 1xx is not a final answer: the client would hang until its time-out instead of seeing the fault.
    for (const status of [100, 103, 199]) expect(() => sb!.faults.inject({ status })).toThrow(/final HTTP status \(200-599\)/);
    expect(() => sb!.faults.inject({ route: 'GET  x y', status: 500 })).toThrow(TypeError);
  });

  it('refuses a route that could never match, so a resilience test cannot pass with no fault injected', async () => {
    sb = await startSandbox();
    // No leading slash (once read as a method), the service's prefix missing, a misspelt method.
    expect(() => sb!.faults.inject({ route: 'api/v1/checkout/init', status: 500 })).toThrow(/names no HTTP method \(api\/v1\/checkout\/init\)/);
    expect(() => sb!.faults.inject({ route: 'POST /v1/checkout/init', status: 500 })).toThrow(/outside this service's paths, which begin with \/api\//);
    expect(() => sb!.faults.inject({ route: 'PSOT /api/v1/checkout/init', status: 500 })).toThrow(/names no HTTP method \(PSOT\)/);
    expect(() => sb!.commerce.faults.inject({ route: 'GET /api/v1/payments/:id/status', status: 500 })).toThrow(/begin with \/rest\//);
    expect(sb.faults.list()).toEqual([]);
    // What stays allowed: a method alone, any method, a lower-case one, a path alone.
    const allowed = ['POST', '* /api/v1/checkout/init', 'post /api/v1/checkout/init', '/api/v1/checkout/init', 'GET /*/v1/payments/:id/status', '/:root/v1/checkout/init', '* /{root}/v1/checkout/init'];
    for (const route of allowed) sb.faults.inject({ route, status: 500 });
    sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders', status: 500 });
    sb.commerce.faults.inject({ route: 'GET /*/default/V1/orders', status: 500 });
    expect(sb.faults.list()).toHaveLength(allowed.length);
    // A first segment that only starts like the prefix is outside it too.
    expect(() => sb!.faults.inject({ route: '/apis/v1/checkout/init', status: 500 })).toThrow(/outside this service's paths/);
  });

  it('refuses a route inside the prefix that reaches none of the service\'s routes, listing them', async () => {
    sb = await startSandbox();
    // A typo, a trailing slash, a query string, a method the path is not served with.
    for (const route of ['POST /api/v1/checkout/intt', 'POST /api/v1/checkout/init/', 'POST /api/v1/checkout/init?x=1', 'GET /api/v1/checkout/init', 'PUT']) {
      expect(() => sb!.faults.inject({ route, status: 500 }), route).toThrow(/none of this service's routes.*\(POST \/api\/v1\/checkout\/init, /);
    }
    expect(() => sb!.commerce.faults.inject({ route: 'GET /rest/default/V1/order', status: 500 })).toThrow(/GET \/rest\/:scope\/V1\/orders/);
    expect(sb.faults.list()).toEqual([]);
    // A preflight or a HEAD reaches a path whatever methods it serves; so does a rule over HTTP, the same way.
    sb.faults.inject({ route: 'OPTIONS /api/v1/checkout/init', status: 500 });
    expect((await call(`${sb.paymentUrl}/sandbox/faults`, { body: { route: 'POST /api/v1/checkout/intt', status: 500 } })).status).toBe(422);
    expect(sb.faults.list()).toHaveLength(1);
  });

  it('refuses headers without an answer to carry them, and counts requests with a rule that changes nothing', async () => {
    sb = await startSandbox();
    expect(() => sb!.faults.inject({ headers: { 'Retry-After': '1' } })).toThrow('headers go with an answer: give the rule a status or a body too');
    // Headers no answer can carry: refused now, not a 500 from the sandbox when the rule fires.
    expect(() => sb!.faults.inject({ status: 429, headers: { 'Retry After': '1' } })).toThrow(/headers must be ones an HTTP answer can carry: "Retry After"/);
    expect(() => sb!.faults.inject({ status: 429, headers: { 'Retry-After': '1\r\nSet-Cookie: x=1' } })).toThrow(/headers must be ones an HTTP answer can carry/);
    expect(sb.faults.list()).toEqual([]);
    const counter = sb.faults.inject({ route: 'POST /api/v1/checkout/init', times: Infinity });
    expect((await mintCall(sb)).status).toBe(201);
    expect((await mintCall(sb)).status).toBe(201);
    expect(sb.faults.list().find((fault) => fault.id === counter)?.hits).toBe(2);
    // It only counts: a rule added after it still answers (an outage a resilience test injects while it counts).
    const outage = sb.faults.inject({ route: 'POST /api/v1/checkout/init', status: 503 });
    expect((await mintCall(sb)).status).toBe(503);
    expect(sb.faults.list().find((fault) => fault.id === counter)?.hits).toBe(3);
    expect(sb.faults.list().find((fault) => fault.id === outage)).toBeUndefined(); // its one time used
  });

  it('rate 0 never fires; a rule without a route hits any API route', async () => {
    sb = await startSandbox();
    sb.faults.inject({ rate: 0, times: Infinity, status: 500 });
    expect((await mintCall(sb)).status).toBe(201);
    sb.faults.clear();
    sb.faults.inject({ status: 503 });
    expect((await call(`${sb.paymentUrl}/api/v1/checkout/lookup`, { body: {} })).status).toBe(503);
  });

  it('an HTML 503 body gets a text/html content type', async () => {
    sb = await startSandbox();
    sb.faults.inject({ status: 503, body: '<html><body><h1>503 Service Unavailable</h1></body></html>' });
    const res = await mintCall(sb);
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.text).toContain('<h1>503');
  });

  it('malformed: 200 with a body that is not JSON', async () => {
    sb = await startSandbox();
    sb.faults.inject({ malformed: true });
    const res = await mintCall(sb);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(() => JSON.parse(res.text)).toThrow(SyntaxError);
  });

  it('latency alone delays a normal answer', async () => {
    sb = await startSandbox();
    sb.faults.inject({ latencyMs: 200 });
    const started = Date.now();
    const res = await mintCall(sb);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(res.status).toBe(201);
  });

  it('hang: the request never gets an answer (the client times out)', async () => {
    sb = await startSandbox();
    sb.faults.inject({ hang: true });
    const attempt = fetch(initUrl(sb), { method: 'POST', headers: merchantHeaders(sb), signal: AbortSignal.timeout(300) });
    await expect(attempt).rejects.toThrow(/aborted|timeout/i);
    expect((await mintCall(sb)).status).toBe(201);
  });

  it('close() with a hanging request ends it and does not hang', async () => {
    sb = await startSandbox();
    sb.faults.inject({ hang: true, times: Infinity });
    sb.faults.inject({ latencyMs: 60_000 }); // never reached while the hang rule matches first
    const port = new URL(sb.paymentUrl).port;
    const ended = new Promise<string>((resolve) => {
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/api/v1/checkout/init' }, () => resolve('answered'));
      req.on('error', (err) => resolve(`error: ${err.message}`));
      req.end();
    });
    const keptAlive = await fetch(`${sb.paymentUrl}/sandbox/faults`); // an idle keep-alive socket too
    expect(keptAlive.status).toBe(200);
    await keptAlive.text();
    const current = sb;
    await eventually(() => current.faults.list()[0]?.hits === 1, 10_000, 'the request to reach the hang rule');
    const started = Date.now();
    await sb.close();
    // Not a speed check: it guards that close() does not wait on the hanging request (which never ends).
    // Closing takes a few ms; 10 s is far above that and still short of the test's time-out.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await ended).toMatch(/^error: /);
    sb = undefined;
  });

  it('a latency past what a timer holds is not cut to 1 ms: the request still waits', async () => {
    sb = await startSandbox();
    sb.faults.inject({ latencyMs: 2 ** 31 });
    const answer = await fetch(initUrl(sb), { method: 'POST', headers: merchantHeaders(sb), signal: AbortSignal.timeout(200) }).then((r) => r.status, (e: Error) => e.name);
    expect(answer).toBe('TimeoutError');
  });

  it('close() during injected latency does not wait for it', async () => {
    sb = await startSandbox();
    // times: Infinity keeps the rule listed once taken, so its hits show the request is in its latency.
    const slow = sb.faults.inject({ latencyMs: 60_000, times: Infinity });
    const pending = fetch(initUrl(sb), { method: 'POST', headers: merchantHeaders(sb) }).then(
      (r) => r.status,
      (e: unknown) => e,
    );
    const current = sb;
    await eventually(() => current.faults.list().find((f) => f.id === slow)?.hits === 1, 10_000, 'the request to reach the latency rule');
    const started = Date.now();
    await sb.close();
    // Not a speed check: it guards that close() does not sit out the 60 s latency. Closing takes a few
    // ms; 10 s is far above that and far below the latency.
    expect(Date.now() - started).toBeLessThan(10_000);
    // The request was cut off, not answered: fetch rejects with its network error.
    expect(await pending).toBeInstanceOf(TypeError);
    expect(await pending).toMatchObject({ message: 'fetch failed' });
    sb = undefined;
  });
});

describe('sandbox: fault control over HTTP', () => {
  it('POST /sandbox/faults adds a rule, GET lists it, DELETE clears', async () => {
    sb = await startSandbox();
    const added = await call(`${sb.paymentUrl}/sandbox/faults`, { body: { route: 'POST /api/v1/checkout/init', status: 500, times: null } });
    expect(added.status).toBe(201);
    expect(added.json.id).toMatch(/^flt_/);
    expect((await mintCall(sb)).status).toBe(500);
    expect((await mintCall(sb)).status).toBe(500);
    const listed = await call(`${sb.paymentUrl}/sandbox/faults`);
    expect(listed.json.faults).toEqual([expect.objectContaining({ id: added.json.id, remaining: null, hits: 2 })]);
    expect((await call(`${sb.paymentUrl}/sandbox/faults`, { method: 'DELETE' })).status).toBe(204);
    expect((await mintCall(sb)).status).toBe(201);
  });

  it('refuses an invalid rule with 422, and unknown ids with 404', async () => {
    sb = await startSandbox();
    const bad = await call(`${sb.paymentUrl}/sandbox/faults`, { body: { status: 'five hundred' } });
    expect([bad.status, bad.json.error.code, bad.json.error.message]).toEqual([422, 'invalid_request', expect.stringContaining('status')]);
    const unknownField = await call(`${sb.paymentUrl}/sandbox/faults`, { body: { statsu: 500 } });
    expect(unknownField.status).toBe(422);
    const missing = await call(`${sb.paymentUrl}/sandbox/faults/flt_nope`, { method: 'DELETE' });
    expect([missing.status, missing.json.error.code]).toEqual([404, 'fault_not_found']);
  });

  it('faults never apply to the /sandbox control routes', async () => {
    sb = await startSandbox();
    sb.faults.inject({ times: Infinity, status: 500 });
    expect((await call(`${sb.paymentUrl}/sandbox/faults`)).status).toBe(200);
    expect((await call(`${sb.paymentUrl}/sandbox/faults`, { method: 'DELETE' })).status).toBe(204);
    expect((await mintCall(sb)).status).toBe(201);
  });
});

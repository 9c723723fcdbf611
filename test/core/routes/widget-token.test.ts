import { createServer } from 'node:http';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createPay, PayError, toMinorUnits, type PayOptions } from 'paywidget-server';
import { payMiddleware } from 'paywidget-server/express';
import { listen } from '../../adapters/listen.js';
import type { MountedApp } from '../../adapters/behaviour.js';
import { captureLogger } from '../../helpers/capture-logger.js';

// The merchant's hooks, over real HTTP through Express: what the browser is answered and what the server logs.

const payment = { apiUrl: 'http://127.0.0.1:9', merchantId: 'merchant_1', apiKey: 'sk_test_key', webhookSecret: 'whsec_test' };
const GENERIC = 'An unexpected error occurred in paywidget-server';

let app: MountedApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function serve(options: PayOptions) {
  const logger = captureLogger();
  const pay = createPay({ env: {}, payment, logger, ...options });
  const server = express();
  server.use('/pay', payMiddleware(pay));
  app = await listen(createServer(server), '/pay');
  return { app, logger };
}

type ErrorBody = { error: { code: string; message: string; details?: Record<string, unknown> } };

async function post(mounted: MountedApp, path: string, body: unknown = { orderId: 'o-1' }) {
  const response = await mounted.send({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: JSON.parse(response.text) as ErrorBody, text: response.text };
}

/** The error lines the server logged, parsed. */
function errorLines(logger: ReturnType<typeof captureLogger>) {
  return logger.lines.map((line) => JSON.parse(line) as { level: string; code?: string; err?: { message?: string; cause?: { message?: string } } }).filter((line) => line.level === 'error');
}

describe('a merchant hook that throws an ordinary error', () => {
  it('resolveCheckout: 500 naming the hook, nothing of the error in the answer, the error in a log line that names the hook', async () => {
    const { app, logger } = await serve({
      resolveCheckout: () => {
        const order = undefined as unknown as { total: string };
        return { amount: Number(order.total), currency: 'EUR', orderId: 'o-1' };
      },
    });
    const response = await post(app, '/widget-token');
    expect(response.status).toBe(500);
    expect(response.body.error.code).toBe('CHECKOUT_UNRESOLVED');
    expect(response.body.error.message).toMatch(/^The resolveCheckout hook passed to createPay threw an error, .*see the server log/);
    expect(response.text).not.toContain(GENERIC);
    expect(response.text).not.toMatch(/TypeError|Cannot read properties|total/);
    const [line, ...more] = errorLines(logger);
    expect(more).toEqual([]);
    expect(line?.err?.message).toContain('resolveCheckout');
    expect(line?.err?.cause?.message).toMatch(/Cannot read properties of undefined \(reading 'total'\)/);
  });

  it('authorize: 500 naming the hook, nothing of the error in the answer, and the route stays closed', async () => {
    let resolved = 0;
    const { app, logger } = await serve({
      authorize: () => {
        throw new Error('session store down: redis://10.0.0.5');
      },
      resolveCheckout: () => {
        resolved++;
        return { amount: 100, currency: 'EUR', orderId: 'o-1' };
      },
    });
    for (const path of ['/widget-token', '/payments/pay_1/reconcile']) {
      const response = await post(app, path, {});
      expect(response.status).toBe(500);
      expect(response.body.error).toMatchObject({ code: 'INTERNAL_ERROR', message: expect.stringMatching(/^The authorize hook passed to createPay threw an error, .*see the server log/) });
      expect(response.text).not.toContain(GENERIC);
      expect(response.text).not.toMatch(/session store|redis|10\.0\.0\.5/);
    }
    expect(resolved).toBe(0);
    const lines = errorLines(logger);
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      expect(line.err?.message).toContain('authorize');
      expect(line.err?.cause?.message).toBe('session store down: redis://10.0.0.5');
    }
  });

  it('hands the hooks the query string a custom adapter passes (PayRequest.query)', async () => {
    const pay = createPay({ env: {}, payment, logger: captureLogger(), resolveCheckout: (request) => {
      throw new PayError('ORDER_NOT_FOUND', `No order ${request.query?.get('order') ?? '(none)'}.`);
    } });
    const answer = await pay.handle({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json' }, rawBody: '{}', query: new URLSearchParams('order=7') });
    expect(answer?.status).toBe(404);
    expect(JSON.parse(answer!.body as string)).toEqual({ error: { code: 'ORDER_NOT_FOUND', message: 'No order 7.' } });
  });

  it('passes a PayError the hooks throw on purpose through unchanged, unlogged', async () => {
    const cases: Array<[PayOptions, number, string, string]> = [
      [{ resolveCheckout: () => { throw new PayError('ORDER_NOT_FOUND', 'No order o-1.'); } }, 404, 'ORDER_NOT_FOUND', 'No order o-1.'],
      [{ resolveCheckout: async () => { throw new PayError('ORDER_NOT_PAYABLE', 'Order o-1 is paid.'); } }, 409, 'ORDER_NOT_PAYABLE', 'Order o-1 is paid.'],
      [{ resolveCheckout: () => { throw new PayError('INVALID_INPUT', 'orderId is missing.', { details: { field: 'orderId' } }); } }, 400, 'INVALID_INPUT', 'orderId is missing.'],
      [{ authorize: () => { throw new PayError('UNAUTHORIZED', 'Log in first.'); } }, 401, 'UNAUTHORIZED', 'Log in first.'],
    ];
    for (const [options, status, code, message] of cases) {
      const { app, logger } = await serve(options);
      const response = await post(app, '/widget-token');
      expect(response.status).toBe(status);
      expect(response.body.error).toMatchObject({ code, message });
      expect(errorLines(logger)).toEqual([]);
      await app.close();
    }
  });
});

describe('toMinorUnits refusing an amount inside resolveCheckout', () => {
  it.each([
    ['an amount with too many decimals', '19.999', 'EUR', 'amount', /amount '19\.999' has 3 decimal places but EUR has 2/],
    ['an unknown currency', '19.99', 'EURO', 'currency', /currency "EURO" is not a known ISO 4217 currency/],
  ])('%s: 500 CHECKOUT_UNRESOLVED naming resolveCheckout and the toMinorUnits message, logged, not a 400 blaming the browser', async (_name, total, currency, field, message) => {
    const { app, logger } = await serve({ resolveCheckout: () => ({ amount: toMinorUnits(total, currency), currency, orderId: 'o-1' }) });
    const response = await post(app, '/widget-token');
    expect(response.status).toBe(500);
    expect(response.body.error.code).toBe('CHECKOUT_UNRESOLVED');
    expect(response.body.error.message).toMatch(/^resolveCheckout threw INVALID_INPUT/);
    expect(response.body.error.message).toMatch(message);
    expect(response.body.error.details).toMatchObject({ hook: 'resolveCheckout', field });
    const lines = errorLines(logger);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ code: 'CHECKOUT_UNRESOLVED', err: { message: expect.stringContaining('resolveCheckout') } });
  });

  it("still answers the library's own resolver 400 when the browser's body lacks order_id", async () => {
    const { app, logger } = await serve({ commerce: { url: 'http://127.0.0.1:9', username: 'admin', password: 'secret' } });
    const response = await post(app, '/widget-token', {});
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'order_id' } });
    expect(errorLines(logger)).toEqual([]);
  });
});

describe('the JSON body, parsed when a hook or the route reads it', () => {
  const sendText = (mounted: MountedApp, body: string) => mounted.send({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json' }, body }).then((r) => ({ status: r.status, body: JSON.parse(r.text) as ErrorBody }));

  it('is not parsed for a request authorize refuses: it costs no parse (a deeply nested megabyte takes V8 over 100 ms)', async () => {
    const { app } = await serve({ authorize: () => false, resolveCheckout: () => ({ amount: 1999, currency: 'EUR', orderId: 'o-1' }) });
    const refused = await sendText(app, '[[[[not json');
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('UNAUTHORIZED');
  });

  it('answers 400 INVALID_JSON when authorize or resolveCheckout reads a body that is not JSON, not a 500 blaming the hook', async () => {
    for (const options of [
      { authorize: (request: { body: unknown }) => request.body !== undefined, resolveCheckout: () => ({ amount: 1999, currency: 'EUR', orderId: 'o-1' }) },
      { resolveCheckout: (request: { body: unknown }) => ({ amount: 1999, currency: 'EUR', orderId: String((request.body as { orderId?: unknown }).orderId) }) },
    ]) {
      const { app, logger } = await serve(options);
      const answer = await sendText(app, '{"orderId": ');
      expect(answer.status).toBe(400);
      expect(answer.body.error.code).toBe('INVALID_JSON');
      expect(errorLines(logger)).toEqual([]);
      await app.close();
    }
  });

  it('refuses a body that is not JSON, or past maxBodyBytes, though no hook reads it: a client\'s bug is not ignored, and nothing is minted', async () => {
    let resolved = 0;
    const { app } = await serve({ maxBodyBytes: 1_000, resolveCheckout: () => (resolved++, { amount: 1999, currency: 'EUR', orderId: 'o-1' }) });
    const malformed = await sendText(app, '{not json');
    expect([malformed.status, malformed.body.error.code]).toEqual([400, 'INVALID_JSON']);
    const huge = await sendText(app, JSON.stringify({ orderId: 'o-1', note: 'x'.repeat(2_000) }));
    expect([huge.status, huge.body.error.code]).toEqual([413, 'BODY_TOO_LARGE']);
    expect(resolved).toBe(0);
  });
});

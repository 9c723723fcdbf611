/**
 * payMiddleware on a real Express 4 (installed as `express4`), which the peer range still supports. Express 4
 * ignores the promise a middleware returns, so anything the library let escape would be an unhandled
 * rejection: the process would end.
 */
import { createServer } from 'node:http';
import express4 from 'express4';
import { describe, expect, it } from 'vitest';
import { createPay } from 'paywidget-server';
import { payMiddleware } from 'paywidget-server/express';
import { describeAdapter } from './behaviour.js';
import { listen } from './listen.js';
import { recordUnhandledRejections } from '../helpers/unhandled-rejections.js';

type Express4App = ReturnType<typeof express4>;
// The library's types follow Express 5's; at run time the middleware is the same function.
const middleware = (...args: Parameters<typeof payMiddleware>) => payMiddleware(...args) as unknown as express4.RequestHandler;

function appWith(setup: (app: Express4App) => void) {
  const app = express4();
  setup(app);
  app.use((_req, res) => {
    res.status(404).send('express 4 fallthrough');
  });
  return listen(createServer(app), '/pay');
}

describeAdapter({
  name: 'Express 4',
  listens: true,
  mount: (pay) => appWith((app) => app.use('/pay', middleware(pay))),
  mountBehindReader: (pay) => appWith((app) => {
    // A body logger: reads the stream, keeps no bytes.
    app.use((req, _res, next) => {
      req.on('data', () => {});
      req.on('end', () => next());
    });
    app.use('/pay', middleware(pay));
  }),
  mountBehindParser: {
    mount: (pay) => appWith((app) => {
      app.use(express4.json());
      app.use('/pay', middleware(pay));
    }),
    webhooksWork: false,
    fixNamed: /Express: a body parser such as express\.json\(\) read it first\. Mount payMiddleware before it/,
  },
  fallthrough: { status: 404, text: /express 4 fallthrough/ },
});

describe('Express 4: a middleware that answered first (a request time-out)', () => {
  it('leaves the answer as it is, and nothing escapes as an unhandled rejection', async () => {
    const rejections = recordUnhandledRejections();
    let resolved!: () => void;
    const resolving = new Promise<void>((resolve) => (resolved = resolve));
    const pay = createPay({
      env: {},
      resolveCheckout: async () => {
        // Still working when the time-out below has answered.
        await new Promise((resolve) => setTimeout(resolve, 150));
        resolved();
        return { amount: 100, currency: 'EUR', orderId: 'late' };
      },
    });
    // Express 4 drops the promise the middleware returns; the test keeps it, to know when the library is
    // done with the request (its late answer included) and how that promise ended.
    let settled!: (outcome: { ok: true; value: unknown } | { ok: false; error: unknown }) => void;
    const handled = new Promise<{ ok: true; value: unknown } | { ok: false; error: unknown }>((resolve) => (settled = resolve));
    const paywidget = middleware(pay);
    const app = await appWith((a) => {
      a.use((_req, res, next) => {
        setTimeout(() => res.status(503).json({ error: 'timeout' }), 30);
        next();
      });
      a.use('/pay', (req, res, next) => {
        (paywidget(req, res, next) as unknown as Promise<unknown>).then(
          (value) => settled({ ok: true, value }),
          (error: unknown) => settled({ ok: false, error }),
        );
      });
    });
    try {
      const answer = await app.send({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect([answer.status, answer.text]).toEqual([503, '{"error":"timeout"}']);
      await resolving;
      // The library's own answer (here a 502: no payment service configured) comes after the mint attempt;
      // writing it over the 503 would throw, rejecting the middleware's promise.
      expect(await handled).toEqual({ ok: true, value: undefined });
      expect(await rejections.escaped()).toEqual([]);
    } finally {
      await app.close();
    }
  });
});

describe('Express 4: payMiddleware as a catch-all route handler', () => {
  it("passes CONFIG_INVALID naming app.use('/pay', …) to the error handler, not a silent 404", async () => {
    const errors: Error[] = [];
    const app = await appWith((a) => {
      a.all('/pay/*', middleware(createPay({ env: {} })));
      a.use((error: Error, _req: express4.Request, res: express4.Response, _next: express4.NextFunction) => {
        errors.push(error);
        res.status(500).send('failed');
      });
    });
    try {
      expect((await app.send({ method: 'GET', path: '/payments/pay_1' })).status).toBe(500);
      expect(errors[0]).toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringContaining("payMiddleware is a route handler (app.all('/pay/*', payMiddleware(pay))), so it cannot see which of its routes was asked for. Mount it with app.use at the path above its routes: app.use('/pay', payMiddleware(pay))") });
    } finally {
      await app.close();
    }
  });
});

import { createServer, request as httpRequest } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { createPay } from 'paywidget-server';
import { payMiddleware } from 'paywidget-server/express';
import { signWebhook } from 'paywidget-server/testing';
import { describeAdapter } from './behaviour.js';
import { listen } from './listen.js';
import { expectFormBodyRefused, offlinePay, payRecordingCheckouts } from './offline-pay.js';

function appWith(setup: (app: express.Express) => void) {
  const app = express();
  setup(app);
  app.use((_req, res) => {
    res.status(404).send('express fallthrough');
  });
  return listen(createServer(app), '/pay');
}


/** An app mounted by `mount`, with an error handler after it that keeps what reached it and answers 500. */
async function appKeepingErrors(mount: (app: express.Express) => void) {
  const errors: Error[] = [];
  const app = await appWith((a) => {
    mount(a);
    a.use((error: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      errors.push(error);
      res.status(500).send('failed');
    });
  });
  return { app, errors };
}

/** A request to a path of the app itself (appWith's sender prefixes /pay). */
function fetchFromRoot(app: { webhookUrl?: string | undefined }, path: string, init?: RequestInit): Promise<Response> {
  return fetch(`${new URL(app.webhookUrl!).origin}${path}`, init);
}

/** A body logger: reads every request's stream, keeps no bytes, calls next() once it ended. */
function readAndKeepNothing(req: express.Request, _res: express.Response, next: express.NextFunction): void {
  req.on('data', () => {});
  req.on('end', () => next());
}

describeAdapter({
  name: 'Express 5',
  listens: true,
  mount: (pay) => appWith((app) => app.use('/pay', payMiddleware(pay))),
  mountBehindReader: (pay) => appWith((app) => {
    app.use(readAndKeepNothing);
    app.use('/pay', payMiddleware(pay));
  }),
  mountBehindParser: {
    // express.json() first: the bytes are gone, and the error says where to mount the library.
    mount: (pay) => appWith((app) => {
      app.use(express.json());
      app.use('/pay', payMiddleware(pay));
    }),
    webhooksWork: false,
    fixNamed: /Express: a body parser such as express\.json\(\) read it first\. Mount payMiddleware before it/,
  },
  fallthrough: { status: 404, text: /express fallthrough/ },
});

describeAdapter({
  name: 'Express 5 with express.json({ verify }) keeping the raw body',
  listens: true,
  parserInFront: { latin1: 'refused' },
  jsonParserInFront: true,
  mount: (pay) => appWith((app) => {
    // Its own limit (100 KB by default) above the library's, so the library's limits are the ones tested.
    app.use(express.json({ limit: '1mb', verify: (req, _res, buf) => Object.assign(req, { rawBody: buf }) }));
    app.use('/pay', payMiddleware(pay));
  }),
  mountBehindParser: {
    mount: (pay) => appWith((app) => {
      app.use(express.raw({ type: '*/*' }));
      app.use('/pay', payMiddleware(pay));
    }),
    webhooksWork: true,
    fixNamed: /./,
  },
  fallthrough: { status: 404, text: /express fallthrough/ },
});

describeAdapter({
  // The text as sent: verified as it is (it was refused as "parsed by express.json()").
  name: 'Express 5 with express.text() first, leaving the body as a string',
  listens: true,
  parserInFront: { latin1: 'decoded' },
  mount: (pay) => appWith((app) => {
    app.use(express.text({ type: '*/*', limit: '1mb' }));
    app.use('/pay', payMiddleware(pay));
  }),
  fallthrough: { status: 404, text: /express fallthrough/ },
});

describeAdapter({
  name: 'Express with a parser that set req.body = {} without reading the stream (Express 4 style)',
  listens: true,
  mount: (pay) => appWith((app) => {
    app.use((req, _res, next) => {
      // body-parser 1.x does this for a content type it does not handle.
      (req as { body?: unknown }).body ??= {};
      next();
    });
    app.use('/pay', payMiddleware(pay));
  }),
  fallthrough: { status: 404, text: /express fallthrough/ },
});

describe('Express 5 behind a body parser with a higher limit', () => {
  it('still answers 413 past maxBodyBytes, before resolveCheckout sees the body', async () => {
    const seen: unknown[] = [];
    const pay = createPay({ env: {}, maxBodyBytes: 1_000, resolveCheckout: (request) => void seen.push(request.body) as never });
    const app = await appWith((a) => {
      a.use(express.json({ limit: '10mb' }));
      a.use('/pay', payMiddleware(pay));
    });
    try {
      const answer = await app.send({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ order_id: 'x'.repeat(50_000) }) });
      expect([answer.status, (JSON.parse(answer.text) as { error: { code: string } }).error.code]).toEqual([413, 'BODY_TOO_LARGE']);
      expect(seen).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('takes a parsed body that came chunked, under the limit, though re-serialized it would be longer', async () => {
    // No Content-Length: only the parser's own limit held it. 1e20 is 4 bytes here and 21 in JSON.stringify.
    const seen: unknown[] = [];
    const pay = createPay({ env: {}, maxBodyBytes: 1_000, resolveCheckout: (request) => void seen.push(request.body) as never });
    const server = createServer(express().use(express.json({ limit: '10mb' })).use('/pay', payMiddleware(pay)));
    const app = await listen(server, '/pay');
    try {
      const { port } = server.address() as AddressInfo;
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const request = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/pay/widget-token', headers: { 'content-type': 'application/json' } }, (response) => {
          let body = '';
          response.on('data', (chunk: Buffer) => (body += chunk.toString()));
          response.on('end', () => resolve({ status: response.statusCode!, body }));
        });
        request.on('error', reject);
        // Two writes and no Content-Length: Node sends it chunked.
        request.write('{"order_id":"o-1","n":[');
        request.end(`${Array(100).fill('1e20').join(',')}]}`);
      });
      expect(answer.status).toBe(500); // resolveCheckout answered nothing usable: it was reached
      expect(seen).toHaveLength(1);
    } finally {
      await app.close();
    }
  });
});

describe('createPay({ maxBodyBytes })', () => {
  it('is checked when webhooks.maxBodyBytes is set beside it', () => {
    expect(() => createPay({ env: {}, maxBodyBytes: -5, webhooks: { maxBodyBytes: 4096 } })).toThrow(/maxBodyBytes must be a positive whole number of bytes/);
  });
});

describe('payMiddleware beside the app\'s own routes under the same mount', () => {
  it('leaves the body of a request that is not its route unread, and calls no later middleware for one that is', async () => {
    const pay = offlinePay();
    const later: string[] = [];
    const app = await appWith((a) => {
      a.use('/pay', payMiddleware(pay));
      a.use((req, _res, next) => {
        later.push(req.originalUrl);
        next();
      });
      // The app's own routes under /pay, with a parser of their own: they need the body the library did not read.
      a.post('/pay/other', express.text({ type: '*/*' }), (req, res) => void res.send(`got:${String(req.body)}`));
      a.post('/pay/Webhooks', express.text({ type: '*/*' }), (req, res) => void res.send(`got:${String(req.body)}`));
    });
    try {
      for (const path of ['/other', '/Webhooks']) {
        const response = await app.send({ method: 'POST', path, headers: { 'content-type': 'text/plain' }, body: 'hello' });
        expect([response.status, response.text]).toEqual([200, 'got:hello']);
      }
      expect((await app.send({ method: 'GET', path: '/payments/pay_unknown' })).status).toBe(404);
      expect(later).toEqual(['/pay/other', '/pay/Webhooks']);
    } finally {
      await app.close();
    }
  });
});

describe('payMiddleware reading the body itself', () => {
  it('refuses a body declared past the limit at once (413), without waiting for bytes that may never come', async () => {
    const pay = offlinePay();
    const app = await appWith((a) => a.use('/pay', payMiddleware(pay)));
    const socket = connect(Number(new URL(app.webhookUrl!).port), '127.0.0.1');
    try {
      // Ten megabytes declared, a few bytes sent, the connection kept open.
      socket.write('POST /pay/webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n{"id":');
      const answer = await new Promise<string>((resolve, reject) => {
        socket.once('data', (chunk: Buffer) => resolve(chunk.toString('latin1')));
        socket.once('error', reject);
        setTimeout(() => resolve('no answer within 3 s'), 3_000);
      });
      expect(answer).toMatch(/^HTTP\/1\.1 413 /);
      expect(answer).toContain('BODY_TOO_LARGE');
    } finally {
      socket.destroy();
      await app.close();
    }
  });

  it('takes an event id a sender wrote in UTF-8 in X-Pay-Event-Id (read as Latin-1 by Node) as the signed payload\'s id, once', async () => {
    const pay = offlinePay();
    let runs = 0;
    pay.webhooks.onAny(() => void runs++);
    const app = await appWith((a) => a.use('/pay', payMiddleware(pay)));
    const id = 'evt_é€';
    const signed = signWebhook({ payload: { id, type: 'payment.succeeded' }, secret: 'w', eventId: id });
    // Written as a Go sender writes it: the header's bytes are the id's UTF-8, as the body's are.
    const head = Object.entries({ ...signed.headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(signed.body as string)) }).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    const send = () => new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(app.webhookUrl!).port), '127.0.0.1');
      socket.end(Buffer.concat([Buffer.from(`POST /pay/webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${head}\r\n`, 'utf8'), Buffer.from(signed.body as string, 'utf8')]));
      let answer = '';
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
      socket.on('end', () => resolve(answer));
      socket.on('error', reject);
    });
    try {
      expect(await send()).toMatch(/^HTTP\/1\.1 200 [\s\S]*\{"received":true\}$/);
      expect(await send()).toMatch(/^HTTP\/1\.1 200 [\s\S]*"duplicate":true/);
      expect(runs).toBe(1);
    } finally {
      await app.close();
    }
  });

  it('reads a body sent with Content-Encoding: identity as it is (once or repeated): no compression', async () => {
    const pay = offlinePay();
    const app = await appWith((a) => a.use('/pay', payMiddleware(pay)));
    const send = (encoding: string) => app.send({ method: 'POST', path: '/payments/pay_1/reconcile', headers: { 'content-type': 'application/json', 'content-encoding': encoding }, body: '{"payment_client_token":7}' });
    try {
      for (const encoding of ['identity', 'identity, Identity']) {
        const response = await send(encoding);
        // Read and refused for what it says (a token must be a string), not as compressed (415).
        expect([encoding, response.status, JSON.parse(response.text).error.code]).toEqual([encoding, 400, 'INVALID_INPUT']);
      }
      // `identity, gzip` is gzip: a body that is not is refused as such (400), not read as it came.
      const compressed = await send('identity, gzip');
      expect([compressed.status, JSON.parse(compressed.text).error.message]).toEqual([400, expect.stringContaining('could not be decompressed (Content-Encoding: gzip)')]);
    } finally {
      await app.close();
    }
  });
});

describe('payMiddleware after middleware that read an empty body', () => {
  it('takes it as the empty body it was: nothing was lost', async () => {
    const { pay, seen } = payRecordingCheckouts();
    const app = await appWith((a) => {
      a.use(readAndKeepNothing);
      a.use('/pay', payMiddleware(pay));
    });
    try {
      await app.send({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json' }, body: '' });
      expect(seen).toEqual([{}]);
    } finally {
      await app.close();
    }
  });

  it('takes an HTTP/1.1 request with neither Content-Length nor Transfer-Encoding (curl -X POST) as empty too', async () => {
    const { pay, seen } = payRecordingCheckouts();
    const app = await appWith((a) => {
      a.use(readAndKeepNothing);
      a.use('/pay', payMiddleware(pay));
    });
    try {
      const { port } = new URL(app.webhookUrl!);
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () => socket.write('POST /pay/widget-token HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'));
        let text = '';
        socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1'))).on('end', () => resolve(text)).on('error', reject);
      });
      // resolveCheckout got the empty body (the mint then fails: this pay instance has no service to reach).
      expect(seen).toEqual([{}]);
      expect(answer).toMatch(/^HTTP\/1\.1 502 /);
    } finally {
      await app.close();
    }
  });
});

describe('payMiddleware given the wrong thing, as plain JavaScript allows', () => {
  it('refuses an un-awaited Pay at mount, instead of building a second instance whose webhooks run no handler', () => {
    const pay = offlinePay();
    expect(() => payMiddleware(Promise.resolve(pay) as never)).toThrow(/was given a Promise, not a Pay instance: await it first/);
    expect(() => payMiddleware('pay' as never)).toThrow(/the adapter was given a string instead of a Pay instance/); // a CONFIG_INVALID, not a TypeError from the checks
  });

  it('mounted without being called, every request fails naming the call to write (not "unknown option _events")', async () => {
    const { app, errors } = await appKeepingErrors((a) => a.use('/pay', payMiddleware as never));
    try {
      expect((await app.send({ method: 'GET', path: '/payments/pay_1' })).status).toBe(500);
      expect(errors[0]?.message).toContain("mounted without being called, so it got a request instead of a Pay instance. Call it: app.use('/pay', payMiddleware(pay))");
    } finally {
      await app.close();
    }
  });
});

describe('payMiddleware mounted on one of its own routes', () => {
  it.each([
    ['a route handler', (a: express.Express) => a.post('/pay/webhooks', payMiddleware(offlinePay())), "a route handler (app.post('/pay/webhooks', payMiddleware(pay)))"],
    ['app.use at a route', (a: express.Express) => a.use('/pay/webhooks', payMiddleware(offlinePay())), "mounted at '/pay/webhooks', one of its own routes"],
    // A catch-all or a param, as Next's [...path] would suggest: the handler still sees the whole path.
    ['a catch-all route handler', (a: express.Express) => a.all('/pay/*rest', payMiddleware(offlinePay())), "a route handler (app.all('/pay/*rest', payMiddleware(pay)))"],
    ['a route handler with a param', (a: express.Express) => a.post('/pay/:action', payMiddleware(offlinePay())), "a route handler (app.post('/pay/:action', payMiddleware(pay)))"],
  ] as const)('as %s, passes CONFIG_INVALID naming app.use(\'/pay\', …) to the error handler (500, logged), not a 404 a sender gives up on', async (_name, mount, how) => {
    const { app, errors } = await appKeepingErrors(mount);
    try {
      expect((await app.send({ method: 'POST', path: '/webhooks', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(500);
      expect(errors[0]).toMatchObject({ code: 'CONFIG_INVALID' });
      expect(errors[0]!.message).toContain(`payMiddleware is ${how}`);
      expect(errors[0]!.message).toContain("app.use('/pay', payMiddleware(pay)) serves POST /pay/widget-token, POST /pay/webhooks");
    } finally {
      await app.close();
    }
  });

  it("serves its routes through a root catch-all route, and leaves the app's own paths that end like one of them to the app", async () => {
    const app = await appWith((a) => {
      a.all('/*splat', payMiddleware(offlinePay()));
      a.get('/admin/payments/42', (_req, res) => void res.send('admin page'));
    });
    try {
      expect(await (await fetchFromRoot(app, '/admin/payments/42')).text()).toBe('admin page');
      const own = await fetchFromRoot(app, '/payments/pay_1');
      expect([own.status, ((await own.json()) as { error: { code: string } }).error.code]).toEqual([404, 'PAYMENT_NOT_FOUND']);
    } finally {
      await app.close();
    }
  });

  it("leaves a path to the app when app.use mounts it where the path ends like a route with a param ('/api/payments/widget')", async () => {
    const app = await appWith((a) => {
      a.use('/api/payments/widget', payMiddleware(offlinePay()));
      a.get('/api/payments/widget', (_req, res) => void res.send('widget page'));
    });
    try {
      expect(await (await fetchFromRoot(app, '/api/payments/widget')).text()).toBe('widget page');
    } finally {
      await app.close();
    }
  });

  it.each([
    ['under a param', (a: express.Express, mw: express.RequestHandler) => a.all('/:tenant/pay/*rest', mw), '/acme/pay/webhooks', "app.use('/acme/pay', payMiddleware(pay))"],
    ['as an array', (a: express.Express, mw: express.RequestHandler) => a.all(['/pay/*rest'], mw), '/pay/webhooks', "app.use('/pay', payMiddleware(pay))"],
    ['as a RegExp', (a: express.Express, mw: express.RequestHandler) => a.all(/^\/pay\/.*/, mw), '/pay/webhooks', "app.use('/pay', payMiddleware(pay))"],
    ['in a router mounted at /shop', (a: express.Express, mw: express.RequestHandler) => a.use('/shop', express.Router().all('/pay/*rest', mw)), '/shop/pay/webhooks', "app.use('/shop/pay', payMiddleware(pay))"],
  ] as const)('as a route handler whose path can never be one of its routes (%s), passes CONFIG_INVALID naming where to mount it', async (_name, mount, path, fix) => {
    const { app, errors } = await appKeepingErrors((a) => mount(a, payMiddleware(offlinePay())));
    try {
      expect((await fetchFromRoot(app, path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(500);
      expect(errors[0]).toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringContaining(fix) });
    } finally {
      await app.close();
    }
  });

  it("leaves '/webhooks' to the app under a mount with a param (app.use('/:tenant', …)), where it names a tenant", async () => {
    const app = await appWith((a) => {
      a.use('/:tenant', payMiddleware(offlinePay()));
      a.post('/webhooks', (_req, res) => void res.send('the app\'s own'));
    });
    try {
      const response = await fetchFromRoot(app, '/webhooks', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect([response.status, await response.text()]).toEqual([200, "the app's own"]);
    } finally {
      await app.close();
    }
  });

  it("leaves OPTIONS to the app's own handler (its CORS) even where it is mounted wrongly", async () => {
    const app = await appWith((a) => {
      a.use('/pay/webhooks', payMiddleware(offlinePay()));
      a.options('/pay/webhooks', (_req, res) => void res.status(204).end());
    });
    try {
      expect((await app.send({ method: 'OPTIONS', path: '/webhooks' })).status).toBe(204);
    } finally {
      await app.close();
    }
  });

  it('still falls through for a path that is simply not its own, under a right mount', async () => {
    const app = await appWith((a) => a.use('/pay', payMiddleware(offlinePay())));
    try {
      expect(await app.send({ method: 'POST', path: '/not-ours' })).toMatchObject({ status: 404, text: 'express fallthrough' });
      expect(await app.send({ method: 'GET', path: '/' })).toMatchObject({ status: 404, text: 'express fallthrough' });
    } finally {
      await app.close();
    }
  });

  it('falls through after an earlier route handler called next() (Express leaves req.route set), to the app\'s own route', async () => {
    const app = await appWith((a) => {
      a.all('/pay/widget-token', (_req, _res, next) => next()); // a logger on one path, say
      a.use('/pay', payMiddleware(offlinePay()));
      a.options('/pay/widget-token', (_req, res) => void res.status(204).end()); // the app's own CORS preflight
    });
    try {
      expect((await app.send({ method: 'OPTIONS', path: '/widget-token' })).status).toBe(204);
    } finally {
      await app.close();
    }
  });
});

describe('Express: a form body behind express.urlencoded()', () => {
  it('is refused on the JSON routes (415), not minted from the parsed form: the same answer as on Koa', async () => {
    const { pay, seen } = payRecordingCheckouts();
    const app = await appWith((server) => {
      server.use(express.urlencoded());
      server.use('/pay', payMiddleware(pay));
    });
    await expectFormBodyRefused(app, seen);
  });
});

describe('Express: Next\'s redirect() in a hook, outside the App Router', () => {
  it('is a hook that failed, answered 500 naming the hook and logged, not passed on as Next control flow', async () => {
    const logged: string[] = [];
    const pay = offlinePay({
      logger: { debug() {}, info() {}, warn() {}, error: (_obj: unknown, msg: string) => void logged.push(msg) },
      authorize: () => {
        throw Object.assign(new Error('NEXT_REDIRECT'), { digest: 'NEXT_REDIRECT;replace;/login;307;' });
      },
    });
    const app = await appWith((server) => server.use('/pay', payMiddleware(pay)));
    try {
      const answer = await app.send({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(answer.status).toBe(500);
      expect(JSON.parse(answer.text).error.message).toContain('The authorize hook passed to createPay threw an error');
      expect(logged).toContain('route handler failed');
    } finally {
      await app.close();
    }
  });
});

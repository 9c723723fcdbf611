import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { apiResolver } from 'next/dist/server/api-utils/node/api-resolver.js';
import { getRouteMatcher } from 'next/dist/shared/lib/router/utils/route-matcher.js';
import { getRouteRegex } from 'next/dist/shared/lib/router/utils/route-regex.js';
import getRawBody from 'raw-body';
import { notFound, redirect } from 'next/navigation.js';
import { describe, expect, it, vi } from 'vitest';
import type { Pay, PayError } from 'paywidget-server';
import { createPagesHandler, createRouteHandlers } from 'paywidget-server/next';
import { describeAdapter, type MountedApp } from './behaviour.js';
import { captureLogger } from '../helpers/capture-logger.js';
import { eventually } from '../helpers/eventually.js';
import { listen } from './listen.js';
import { offlinePay, payRecordingCheckouts } from './offline-pay.js';

/** Next's own matcher for `api/pay/[...path]`: it hands the segments over decoded, as a route's params. */
const matchCatchAll = getRouteMatcher(getRouteRegex('/api/pay/[...path]'));

/** Next's server answers a path its matcher cannot decode (a DecodeError) 400 with its error page, before any route. */
const NOT_DECODABLE = { status: 400, text: 'Bad Request (Next.js error page)' };

/** App Router: the handlers get real Fetch Requests and Next's `params` promise, as Next 16 gives them. */
async function appRouter(pay: Pay): Promise<MountedApp> {
  const handlers = createRouteHandlers(pay);
  return {
    async send({ method, path, headers, body }) {
      const request = new Request(`http://shop.test/api/pay${path}`, { method, headers: headers ?? {}, body: (body as BodyInit | undefined) ?? null });
      let params: ReturnType<typeof matchCatchAll>;
      try {
        params = matchCatchAll(new URL(request.url).pathname) || {};
      } catch {
        return { ...NOT_DECODABLE, headers: new Headers() };
      }
      // Next answers HEAD with the GET handler when the file exports no HEAD.
      const response = await handlers[(method === 'HEAD' ? 'GET' : method) as 'GET' | 'POST' | 'OPTIONS'](request, { params: Promise.resolve(params) });
      return { status: response.status, headers: response.headers, text: await response.text() };
    },
    close: async () => {},
  };
}

/**
 * Pages Router: Next's own API-route runtime (apiResolver) serves the handler, with the page's
 * `config` deciding whether Next's body parser runs first.
 */
function pagesRouter(pay: Pay, bodyParser: boolean): Promise<MountedApp> {
  const page = { default: createPagesHandler(pay), config: { api: { bodyParser } } };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    let params: ReturnType<typeof matchCatchAll>;
    try {
      params = matchCatchAll(url.pathname);
    } catch {
      res.writeHead(NOT_DECODABLE.status).end(NOT_DECODABLE.text);
      return;
    }
    if (!params) {
      res.statusCode = 404;
      res.end('next fallthrough');
      return;
    }
    const query = { ...Object.fromEntries(url.searchParams), ...params };
    void apiResolver(req, res, query, page, { previewModeId: '', previewModeEncryptionKey: '', previewModeSigningKey: '', dev: false }, false);
  });
  return listen(server, '/api/pay');
}

/** Pages Router, bodyParser: false, where the page reads the body first (to log it, say) and keeps no bytes. */
function readingPage(pay: Pay): Promise<MountedApp> {
  const handler = createPagesHandler(pay);
  const page = { default: async (req: IncomingMessage, res: ServerResponse) => {
    await getRawBody(req);
    return handler(req as Parameters<typeof handler>[0], res as Parameters<typeof handler>[1]);
  }, config: { api: { bodyParser: false } } };
  const server = createServer((req, res) => {
    const params = matchCatchAll(new URL(req.url ?? '/', 'http://localhost').pathname) || {};
    void apiResolver(req, res, params, page, { previewModeId: '', previewModeEncryptionKey: '', previewModeSigningKey: '', dev: false }, false);
  });
  return listen(server, '/api/pay');
}

describeAdapter({
  name: 'Next App Router',
  listens: false,
  mount: appRouter,
  refusesUndecodablePath: true,
  fallthrough: { status: 404, text: /NOT_FOUND/ },
});

describeAdapter({
  name: 'Next Pages Router',
  listens: true,
  mount: (pay) => pagesRouter(pay, false),
  mountBehindReader: readingPage,
  refusesUndecodablePath: true,
  mountBehindParser: {
    // Next's default body parser left on: the error names the page config that turns it off.
    mount: (pay) => pagesRouter(pay, true),
    webhooksWork: false,
    fixNamed: /Next\.js Pages Router: .*export const config = \{ api: \{ bodyParser: false \} \}/,
  },
  fallthrough: { status: 404, text: /NOT_FOUND/ },
});

describe('Next App Router: a body read before the handler', () => {
  it('answers the webhook 500 WEBHOOK_BODY_NOT_RAW naming the App Router fix, instead of failing on the used body', async () => {
    const pay = offlinePay();
    const { POST } = createRouteHandlers(pay);
    const request = new Request('http://shop.test/api/pay/webhooks', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"type":"payment.succeeded"}' });
    await request.json(); // what a wrapper around the route handler might do
    const response = await POST(request, { params: Promise.resolve({ path: ['webhooks'] }) });
    expect(response.status).toBe(500);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('WEBHOOK_BODY_NOT_RAW');
    expect(error.message).toMatch(/Next\.js App Router: the Request body was read before createRouteHandlers got it/);
    expect(error.message).not.toMatch(/Express|Koa/);
  });

  it('answers a JSON route 400 saying the body was read first, instead of minting from an empty body', async () => {
    const seen: unknown[] = [];
    const pay = offlinePay({ resolveCheckout: ({ body }) => void seen.push(body) as never });
    const { POST } = createRouteHandlers(pay);
    const request = new Request('http://shop.test/api/pay/widget-token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"orderId":"o-42"}' });
    await request.json();
    const response = await POST(request, { params: Promise.resolve({ path: ['widget-token'] }) });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('The request body was read before paywidget-server got it, and cannot be read again. Hand the Request over unread') });
    expect(seen).toEqual([]);
  });

  it('answers 400 INVALID_INPUT when the body breaks off (the client went away), not 500 "see the server log"', async () => {
    const pay = offlinePay();
    const { POST } = createRouteHandlers(pay);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"type":'));
        controller.error(new Error('the client went away'));
      },
    });
    const request = new Request('http://shop.test/api/pay/webhooks', { method: 'POST', body, duplex: 'half' } as RequestInit);
    const response = await POST(request, { params: Promise.resolve({ path: ['webhooks'] }) });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('The request body could not be read (the client aborted') });
  });
});

describe('Next App Router: a handler called without its route context', () => {
  it('throws CONFIG_INVALID saying to pass the context (Next logs it and answers 500), instead of a TypeError on params', async () => {
    let resolved = 0;
    const pay = offlinePay({ resolveCheckout: () => (resolved++, { amount: 100, currency: 'EUR', orderId: 'o' }) });
    const handlers = createRouteHandlers(pay);
    // The common wrapper that forgets Next's second argument.
    const POST = async (request: Request) => handlers.POST(request, undefined as never);
    const GET = async (request: Request) => handlers.GET(request, {} as never);
    for (const [method, call] of [['POST', POST], ['GET', GET]] as const) {
      const request = new Request(`http://shop.test/api/pay/${method === 'POST' ? 'widget-token' : 'payments/pay_1'}`, { method, headers: { 'content-type': 'application/json' }, body: method === 'POST' ? '{}' : null });
      const error = (await call(request).then(() => undefined, (thrown: unknown) => thrown)) as PayError;
      expect(error.code).toBe('CONFIG_INVALID');
      expect(error.message).toContain(`createRouteHandlers' ${method} handler was called without the route context`);
      expect(error.message).toContain(`export async function ${method}(request, context) { return handlers.${method}(request, context); }`);
    }
    expect(resolved).toBe(0);
  });
});

describe('Next App Router: a body declared past its route\'s own limit', () => {
  it('answers 413 at once, not after waiting for a body the webhook route could take', async () => {
    const handlers = createRouteHandlers(offlinePay({ maxBodyBytes: 1024, webhooks: { maxBodyBytes: 64 * 1024 }, resolveCheckout: () => ({ amount: 100, currency: 'EUR', orderId: 'o' }) }));
    // A body that never comes: only the declared length can refuse it in time.
    const stalled = new ReadableStream<Uint8Array>({ start() {} });
    const request = new Request('http://shop.test/api/pay/widget-token', { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(8 * 1024) }, body: stalled, duplex: 'half' } as RequestInit);
    const response = await handlers.POST(request, { params: Promise.resolve({ path: ['widget-token'] }) });
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('BODY_TOO_LARGE');
  });
});

describe('Next App Router: a compressed body refused part-way', () => {
  it('is read to its end undecompressed (not cancelled), so Next\'s connection can take the next request', async () => {
    const handlers = createRouteHandlers(offlinePay({ maxBodyBytes: 1024, resolveCheckout: () => ({ amount: 100, currency: 'EUR', orderId: 'o' }) }));
    // A bomb (a few hundred bytes that expand past the limit) followed by more bytes of the same body, sent in pieces.
    const bomb = gzipSync(JSON.stringify({ padding: 'x'.repeat(64 * 1024) }));
    const pieces = [bomb, ...Array.from({ length: 20 }, () => new Uint8Array(1024))];
    let sent = 0;
    let cancelled = false;
    let finished = false;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (sent > 0) await new Promise((resolve) => setTimeout(resolve, 5)); // the rest comes as a client sends it
        if (sent < pieces.length) controller.enqueue(pieces[sent++]!);
        else {
          finished = true;
          controller.close();
        }
      },
      cancel() {
        cancelled = true;
      },
    });
    const request = new Request('http://shop.test/api/pay/widget-token', { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body, duplex: 'half' } as RequestInit);
    const response = await handlers.POST(request, { params: Promise.resolve({ path: ['widget-token'] }) });
    expect(response.status).toBe(413);
    await eventually(() => finished || undefined);
    expect(cancelled).toBe(false);
  });
});

describe('Next App Router: redirect() or notFound() in a hook', () => {
  it('throws them on untouched, for Next to answer (307, 404), instead of answering 500 and logging a failure', async () => {
    const logger = captureLogger();
    const pay = offlinePay({
      logger,
      authorize: ({ path }) => (path === '/widget-token' ? redirect('/login') : true),
      resolveCheckout: () => notFound(),
    });
    const handlers = createRouteHandlers(pay);
    const call = (path: string) => handlers.POST(new Request(`http://shop.test/api/pay${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }), { params: Promise.resolve({ path: path.slice(1).split('/') }) });
    const thrown = async (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => (error as { digest?: string }).digest);
    expect(await thrown(call('/widget-token'))).toBe('NEXT_REDIRECT;replace;/login;307;');

    const checkoutOnly = createRouteHandlers(offlinePay({ logger, resolveCheckout: () => notFound() }));
    const request = new Request('http://shop.test/api/pay/widget-token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(await thrown(checkoutOnly.POST(request, { params: Promise.resolve({ path: ['widget-token'] }) }))).toBe('NEXT_HTTP_ERROR_FALLBACK;404');
    expect(logger.text()).not.toContain('route handler failed');
  });
});

describe('Next App Router: handlers exported from a route with no catch-all segment', () => {
  it('throws CONFIG_INVALID naming the catch-all folder (Next logs it and answers 500), not a context the route did pass', async () => {
    const handlers = createRouteHandlers(offlinePay());
    // What Next 16 passes to app/api/pay/webhooks/route.ts: a context whose params are undefined.
    const error = (await handlers.POST(new Request('http://shop.test/api/pay/webhooks', { method: 'POST', body: '{}' }), { params: undefined } as never).then(() => undefined, (thrown: unknown) => thrown)) as PayError;
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain('exported from a route with no catch-all segment');
    expect(error.message).toContain('app/api/pay/[...path]/route.ts');
    expect(error.message).not.toContain('without the route context');
  });
});

describe('Next: createPagesHandler exported from an App Router route by mistake', () => {
  it('fails with CONFIG_INVALID naming createRouteHandlers, instead of a TypeError on req.query', async () => {
    const handler = createPagesHandler(offlinePay());
    const request = new Request('http://shop.test/api/pay/widget-token', { method: 'POST', body: '{}' });
    const error = await handler(request as never, { params: Promise.resolve({ path: ['widget-token'] }) } as never).then(() => undefined, (e: unknown) => e as { code?: string; message?: string });
    expect(error?.code).toBe('CONFIG_INVALID');
    expect(error?.message).toContain('In app/, use createRouteHandlers');
  });
});

describe('paywidget-server/next as edge bundles resolve it (the edge-light build)', () => {
  it('has the App Router handlers themselves', async () => {
    const edge = await import('../../src/adapters/next/edge.js');
    expect(edge.createRouteHandlers).toBe(createRouteHandlers);
  });

  it('answers a Pages Router API route built for the edge runtime with CONFIG_INVALID saying what to change', async () => {
    const { createPagesHandler: edgePagesHandler } = await import('../../src/adapters/next/edge.js');
    const handler = edgePagesHandler(offlinePay());
    const request = new Request('http://shop.test/api/pay/widget-token', { method: 'POST', body: '{}' });
    const error = await handler(request as never, undefined as never).then(() => undefined, (e: unknown) => e as { code?: string; message?: string });
    expect(error?.code).toBe('CONFIG_INVALID');
    expect(error?.message).toContain("Remove runtime: 'edge' from the page's config");
  });
});

describe('Next: createRouteHandlers exported from a Pages Router API route by mistake', () => {
  it('fails, so Next answers 500 and logs the fix, instead of returning a Response the Pages Router never sends', async () => {
    const pay = offlinePay();
    const { POST } = createRouteHandlers(pay);
    const page = { default: POST as unknown as Parameters<typeof apiResolver>[3]['default'], config: { api: { bodyParser: false } } };
    const server = createServer((req, res) => {
      const params = matchCatchAll(new URL(req.url ?? '/', 'http://localhost').pathname) || {};
      void apiResolver(req, res, params, page, { previewModeId: '', previewModeEncryptionKey: '', previewModeSigningKey: '', dev: false }, false);
    });
    const app = await listen(server, '/api/pay');
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const answer = await app.send({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(answer.status).toBe(500);
      expect(String(logged.mock.calls.flat().find((arg) => arg instanceof Error))).toContain('In pages/api, use createPagesHandler');
    } finally {
      logged.mockRestore();
      await app.close();
    }
  });
});

describe('Next Pages Router with its body parser on', () => {
  it('refuses a JSON body sent as text/plain (a fetch() without headers, or a page of another site) though its parser made a string of it', async () => {
    const { pay, seen } = payRecordingCheckouts();
    const app = await pagesRouter(pay, true);
    try {
      const response = await app.send({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'text/plain;charset=UTF-8' }, body: '{"orderId":"o-42"}' });
      expect([response.status, JSON.parse(response.text).error.code]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
      expect(seen).toEqual([]);
    } finally {
      await app.close();
    }
  });
});

describe.each([
  ['App Router', appRouter],
  ['Pages Router', (pay: Pay) => pagesRouter(pay, false)],
] as const)('Next %s: OPTIONS', (_name, mount) => {
  it('answers 204 with Allow on one of its paths (there is no next() to leave it to), and 404 elsewhere', async () => {
    const app = await mount(offlinePay());
    try {
      const ours = await app.send({ method: 'OPTIONS', path: '/payments/pay_1' });
      expect([ours.status, ours.headers.get('allow'), ours.text]).toEqual([204, 'GET, HEAD, OPTIONS', '']);
      expect(ours.headers.get('content-length')).toBeNull(); // a 204 claims no length (RFC 9110)
      // Not Next's own OPTIONS, which offers every method the route file exports.
      expect((await app.send({ method: 'OPTIONS', path: '/widget-token' })).headers.get('allow')).toBe('POST, OPTIONS');
      const unknown = await app.send({ method: 'OPTIONS', path: '/not-ours' });
      expect(unknown.status).toBe(404);
    } finally {
      await app.close();
    }
  });
});

/** What a handler did with a request: the answer sent, and what it threw for Next to log (Next answers that 500). */
interface Outcome {
  response: Response;
  thrown: unknown;
}

describe.each([
  ['createRouteHandlers', async (pay: Pay, path: string, params: Record<string, string | string[]>): Promise<Outcome> => {
    const { GET } = createRouteHandlers(pay);
    try {
      return { response: await GET(new Request(`http://shop.test/api/pay/${path}`), { params: Promise.resolve(params) }), thrown: undefined };
    } catch (error) {
      return { response: new Response(null, { status: 500 }), thrown: error };
    }
  }],
  ['createPagesHandler', async (pay: Pay, path: string, params: Record<string, string | string[]>): Promise<Outcome> => {
    const page = { default: createPagesHandler(pay), config: { api: { bodyParser: false } } };
    // Next's apiResolver logs what a page threw with console.error, and answers 500.
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    const server = createServer((req, res) => void apiResolver(req, res, params, page, { previewModeId: '', previewModeEncryptionKey: '', previewModeSigningKey: '', dev: false }, false));
    const app = await listen(server, '/api/pay');
    try {
      const { status, text } = await app.send({ method: 'GET', path: `/${path}` });
      return { response: new Response(text, { status }), thrown: logged.mock.calls.flat().find((value) => value instanceof Error) };
    } finally {
      logged.mockRestore();
      await app.close();
    }
  }],
] as const)('Next %s: a 404 outside its routes', (factory, send) => {
  const pay = offlinePay();
  const errorOf = async ({ response }: Outcome) => ((await response.json()) as { error: { code: string; message: string } }).error;

  it('under a catch-all named otherwise ([...slug]), throws CONFIG_INVALID naming that segment and the option, for Next to log and answer 500', async () => {
    const { response, thrown } = await send(pay, 'payments', { slug: ['payments'] });
    expect(response.status).toBe(500);
    expect(thrown).toMatchObject({ code: 'CONFIG_INVALID', message: `paywidget-server: the catch-all segment of this route is named 'slug', not 'path', so ${factory} finds no path in it and no route of the library can be reached. Pass its name: ${factory}(pay, { param: "slug" }).` });
  });

  it('under [...slug], for a path that is one of its routes (webhooks), names that segment too, not a page without a catch-all', async () => {
    const { response, thrown } = await send(pay, 'webhooks', { slug: ['webhooks'] });
    expect(response.status).toBe(500);
    expect((thrown as Error).message).toContain(`named 'slug', not 'path'`);
  });

  it('under a plain dynamic segment of the same name higher up ([path]/pay/[...rest]), names the catch-all, not "no route at /shop1"', async () => {
    const { response, thrown } = await send(pay, 'shop1/pay/payments', { path: 'shop1', rest: ['payments'] });
    expect(response.status).toBe(500);
    expect((thrown as Error).message).toContain(`named 'rest', not 'path'`);
    expect((thrown as Error).message).toContain(`${factory}(pay, { param: "rest" })`);
  });

  it('for the mount path itself (an optional catch-all [[...path]] holds nothing), says only that there is no route there', async () => {
    const outcome = await send(pay, '', {});
    expect(outcome.response.status).toBe(404);
    expect(await errorOf(outcome)).toEqual({ code: 'NOT_FOUND', message: 'No paywidget-server route at /. Its routes, below the folder of the catch-all: POST /widget-token, POST /webhooks, POST /payments/:paymentId/reconcile, GET /payments/:paymentId.' });
  });
});

describe('Next Pages Router: a query key named like the catch-all, under [...slug]', () => {
  it('does not hide the segment (Next\'s value wins over the query string\'s): the error still names the segment', async () => {
    const page = { default: createPagesHandler(offlinePay()), config: { api: { bodyParser: false } } };
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    const server = createServer((req, res) => void apiResolver(req, res, { slug: ['webhooks'] }, page, { previewModeId: '', previewModeEncryptionKey: '', previewModeSigningKey: '', dev: false }, false));
    const app = await listen(server, '/api/pay');
    try {
      expect((await app.send({ method: 'POST', path: '/webhooks?slug=1', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(500);
      const thrown = logged.mock.calls.flat().find((value) => value instanceof Error) as Error | undefined;
      expect(thrown?.message).toContain("named 'slug', not 'path'");
    } finally {
      logged.mockRestore();
      await app.close();
    }
  });
});

describe('Next Pages Router: a query key sent twice at the mount of [[...path]]', () => {
  it('is the query string\'s, not a catch-all segment: a 404 saying there is no route there, not a 500', async () => {
    const page = { default: createPagesHandler(offlinePay()), config: { api: { bodyParser: false } } };
    // Next merges the query string into req.query: ?x=1&x=2 is an array there, as a catch-all's segments are.
    const server = createServer((req, res) => void apiResolver(req, res, { x: ['1', '2'] }, page, { previewModeId: '', previewModeEncryptionKey: '', previewModeSigningKey: '', dev: false }, false));
    const app = await listen(server, '/api/pay');
    try {
      const answer = await app.send({ method: 'GET', path: '/?x=1&x=2' });
      expect(answer.status).toBe(404);
      expect(JSON.parse(answer.text).error).toMatchObject({ code: 'NOT_FOUND' });
    } finally {
      await app.close();
    }
  });
});

describe('Next Pages Router: createPagesHandler in a page with no catch-all segment (pages/api/pay/webhooks.ts)', () => {
  it('throws CONFIG_INVALID naming the catch-all page, for Next to log and answer 500, not a 404 "no route at /" that a sender may give up on', async () => {
    const page = { default: createPagesHandler(offlinePay()), config: { api: { bodyParser: false } } };
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    // What Next does for such a page: no query parameter for the path.
    const server = createServer((req, res) => void apiResolver(req, res, {}, page, { previewModeId: '', previewModeEncryptionKey: '', previewModeSigningKey: '', dev: false }, false));
    const app = await listen(server, '/api/pay');
    try {
      const answer = await app.send({ method: 'POST', path: '/webhooks', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(answer.status).toBe(500);
      const thrown = logged.mock.calls.flat().find((value) => value instanceof Error) as PayError | undefined;
      expect(thrown).toMatchObject({ code: 'CONFIG_INVALID' });
      expect(thrown!.message).toContain('a page with no catch-all segment');
      expect(thrown!.message).toContain('Name the page pages/api/pay/[...path].ts');
    } finally {
      logged.mockRestore();
      await app.close();
    }
  });
});

/** A payment id as a route param: what the core sees must be the segment Next decoded, not decoded twice. */
describe.each([
  ['App Router', appRouter],
  ['Pages Router', (pay: Pay) => pagesRouter(pay, false)],
] as const)('Next %s: encoded path segments', (_name, mount) => {
  const pay = offlinePay();

  it('passes pay_a%2541 to the route as pay_a%41 (decoding it again would give pay_aA), and %2F as a slash in the id', async () => {
    const app = await mount(pay);
    try {
      const percent = await app.send({ method: 'GET', path: '/payments/pay_a%2541' });
      expect(percent.status).toBe(404);
      expect(JSON.parse(percent.text).error).toMatchObject({ code: 'PAYMENT_NOT_FOUND', details: { paymentId: 'pay_a%41' } });

      // Joined decoded, 'a/b' would become two segments and no route at all (NOT_FOUND).
      const slash = await app.send({ method: 'GET', path: '/payments/a%2Fb' });
      expect(slash.status).toBe(400);
      const { error } = JSON.parse(slash.text) as { error: { code: string; message: string; details: unknown } };
      expect(error).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'paymentId' } });
      expect(error.message).toContain("(got 'a/b')");
    } finally {
      await app.close();
    }
  });
});

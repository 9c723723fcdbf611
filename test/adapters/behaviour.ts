/**
 * One behavioural suite for every framework adapter. Each adapter test starts the real framework
 * over real HTTP (or hands real Fetch Requests to the Next App Router handlers) and runs this.
 */
import { connect } from 'node:net';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { IncomingMessage } from 'node:http';
import { createPay, type Framework, type HookRequest, type Pay } from 'paywidget-server';
import { startSandbox, type Sandbox } from 'paywidget-server/sandbox';
import { signWebhook } from 'paywidget-server/testing';

export interface SentRequest {
  method: string;
  /** Relative to the mount point, e.g. '/webhooks'. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

export interface Received {
  status: number;
  headers: Headers;
  text: string;
}

/** A running app with the library mounted; `send` reaches it, `close` stops it. */
export interface MountedApp {
  send(request: SentRequest): Promise<Received>;
  /** Where the sandbox can POST webhooks, when the app listens on a port. */
  webhookUrl?: string;
  close(): Promise<void>;
}

export interface AdapterCase {
  name: string;
  /** Mounts the library in the framework, with nothing in front of it. */
  mount(pay: Pay): Promise<MountedApp>;
  /** Mounts it behind a JSON body parser, and says whether webhooks still work there. */
  mountBehindParser?: { mount(pay: Pay): Promise<MountedApp>; webhooksWork: boolean; fixNamed: RegExp };
  /** Mounts it behind the app's own code that reads the request stream and keeps nothing (a body logger). */
  mountBehindReader?(pay: Pay): Promise<MountedApp>;
  /** Whether the app listens on a port the sandbox can send webhooks to. */
  listens: boolean;
  /**
   * A body parser in front of the library: it decompresses a gzip body, and decodes a Latin-1 one or refuses
   * it itself (415, its own page). Where the library reads the stream, it refuses both (415) with its code.
   */
  parserInFront?: { latin1: 'decoded' | 'refused' };
  /** A JSON body parser in front of the library, which answers a body that is not JSON itself (400, its own page). */
  jsonParserInFront?: boolean;
  /** The framework answers a path it cannot percent-decode itself (Next: 400, its error page), before the library. */
  refusesUndecodablePath?: boolean;
  /** What an unknown path answers: the framework's own fall-through (Next's catch-all route, which cannot pass a request on: the library's 404). */
  fallthrough: { status: number; text?: RegExp };
}

/** The URL path each framework's own request object holds: what a hook reads from `native`. */
const NATIVE_PATH: Record<Framework, (native: unknown) => string> = {
  express: (native) => (native as { originalUrl: string }).originalUrl,
  koa: (native) => (native as { originalUrl: string; state: object }).originalUrl,
  'next-app': (native) => new URL((native as Request).url).pathname,
  'next-pages': (native) => (native as IncomingMessage).url!,
};

export async function fetchSender(baseUrl: string): Promise<MountedApp['send']> {
  return async ({ method, path, headers, body }) => {
    const response = await fetch(baseUrl + path, { method, headers: headers ?? {}, body: (body as BodyInit | undefined) ?? null });
    return { status: response.status, headers: response.headers, text: await response.text() };
  };
}

export function describeAdapter(adapter: AdapterCase): void {
  describe(`${adapter.name} adapter`, () => {
    let sandbox: Sandbox;
    let app: MountedApp;
    const handled: string[] = [];
    const checkouts: string[] = [];
    let authorized: HookRequest | undefined;
    let signalInHook: AbortSignal | undefined;
    const responses: string[] = [];
    let pay: Pay;

    const send = async (request: SentRequest) => {
      const received = await app.send(request);
      responses.push(received.text, JSON.stringify([...received.headers]));
      return received;
    };
    const webhook = (payload: unknown, eventId?: string, timestamp?: number) => {
      const signed = signWebhook({ payload, secret: sandbox.webhookSecret, eventId, timestamp });
      return { method: 'POST', path: '/webhooks', headers: signed.headers, body: signed.body, eventId: signed.headers['x-pay-event-id'] };
    };

    beforeAll(async () => {
      sandbox = await startSandbox();
      pay = createPay({
        env: {},
        payment: { apiUrl: sandbox.paymentUrl, merchantId: sandbox.merchantId, apiKey: sandbox.apiKey, webhookSecret: sandbox.webhookSecret },
        resolveCheckout: ({ body }) => {
          const orderId = String((body as { orderId?: string }).orderId ?? 'order-1');
          checkouts.push(orderId);
          return { amount: 4200, currency: 'EUR', orderId };
        },
        // `headers` is a Node object or a Fetch Headers depending on the framework; header() reads both.
        authorize: (request) => {
          authorized = request;
          if (request.header('x-read-signal')) signalInHook = request.signal;
          return request.header('X-Shop-Session') !== 'revoked';
        },
        // A short attempt time-out, so the hanging upstream below fails fast.
        http: { maxRetries: 0, attemptTimeoutMs: 1500 },
        // Webhooks take more than the JSON routes: the adapters read each route's body up to its own limit.
        maxBodyBytes: 64 * 1024,
        webhooks: { maxBodyBytes: 128 * 1024 },
      });
      pay.webhooks.onAny(({ id }) => {
        handled.push(id);
      });
      app = await adapter.mount(pay);
    });
    afterAll(async () => {
      await app?.close();
      await sandbox?.close();
    });
    afterEach(() => sandbox.faults.clear());

    it('mints a widget token the payment service accepts', async () => {
      const response = await send({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json' }, body: '{"orderId":"order-9"}' });
      expect(response.status).toBe(200);
      const { widget_token } = JSON.parse(response.text) as { widget_token: string };
      const lookup = await fetch(`${sandbox.paymentUrl}/api/v1/checkout/lookup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ widget_token }) });
      expect(await lookup.json()).toMatchObject({ order: { order_id: 'order-9', amount: 4200, currency: 'EUR' } });
    });

    it('lets the authorize hook read a header the same way in every framework', async () => {
      const refused = await send({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json', 'x-shop-session': 'revoked' }, body: '{}' });
      expect(refused.status).toBe(401);
      expect(JSON.parse(refused.text).error).toEqual({ code: 'UNAUTHORIZED', message: 'The authorize hook refused this request (it returned false): send the session or credentials it checks.' });
    });

    it('hands the hooks the framework’s own request as native (Express req, Koa ctx, a Fetch Request), for a session or a mount-path param', async () => {
      authorized = undefined;
      const response = await send({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json', 'x-read-signal': '1' }, body: '{"orderId":"native-1"}' });
      expect(response.status).toBe(200);
      const { framework, native } = authorized!;
      expect(native).toBeDefined();
      expect(NATIVE_PATH[framework!](native)).toMatch(/\/widget-token$/);
      // The request's close signal reaches the hooks too, for their own long work.
      expect(signalInHook).toBeInstanceOf(AbortSignal);
      expect(signalInHook!.aborted).toBe(false);
      // Read only after the answer was sent (by work the hook left running), it does not claim the client left.
      authorized = undefined;
      expect((await send({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json' }, body: '{"orderId":"native-2"}' })).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(authorized!.signal?.aborted).not.toBe(true);
    });

    it('decodes a path param once, and refuses one that is not valid percent-encoding (400) without asking the service about it', async () => {
      const percent = await send({ method: 'GET', path: '/payments/pay_a%2541' });
      expect(JSON.parse(percent.text).error).toMatchObject({ code: 'PAYMENT_NOT_FOUND', details: { paymentId: 'pay_a%41' } });
      // Taken as it is, pay_%ZZ would be polled at the service (404 from there) as if it were an id.
      for (const [method, path] of [['GET', '/payments/pay_%ZZ'], ['POST', '/payments/pay_%ZZ/reconcile']] as const) {
        const response = await send({ method, path, headers: { 'content-type': 'application/json' }, ...(method === 'POST' ? { body: '{}' } : {}) });
        expect([path, response.status]).toEqual([path, 400]);
        if (!adapter.refusesUndecodablePath) expect(JSON.parse(response.text).error).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'paymentId' } });
      }
    });

    it('passes an upstream refusal through unchanged', async () => {
      const body = '{"error":{"code":"merchant_suspended","message":"contact support"}}';
      sandbox.faults.inject({ route: 'POST /api/v1/checkout/init', status: 403, headers: { 'content-type': 'application/vnd.pay+json' }, body });
      const response = await send({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(response.status).toBe(403);
      expect(response.headers.get('content-type')).toBe('application/vnd.pay+json');
      expect(response.headers.get('cache-control')).toBe('no-store'); // a 403 or 404 is cacheable by default
      expect(response.text).toBe(body);
      // One that names no type passes through naming none: the framework adds none of its own.
      sandbox.faults.inject({ route: 'POST /api/v1/checkout/init', status: 402, headers: { 'content-type': '' }, body: 'payment required' });
      const untyped = await send({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect([untyped.status, untyped.headers.get('content-type'), untyped.text]).toEqual([402, null, 'payment required']);
    });

    it('passes a rate limit through with its Retry-After, so the page knows when to ask again', async () => {
      // Past http.retryAfterMaxMs: not waited for on the server, handed to the caller.
      sandbox.faults.inject({ route: 'POST /api/v1/checkout/init', status: 429, headers: { 'retry-after': '120' }, body: 'slow down' });
      const response = await send({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect([response.status, response.headers.get('retry-after'), response.text]).toEqual([429, '120', 'slow down']);
    });

    it('answers an upstream that times out 504, one that sends garbage or a 500 502, and mints nothing', async () => {
      const cases = [
        { fault: { hang: true }, status: 504, code: 'UPSTREAM_TIMEOUT' },
        { fault: { malformed: true }, status: 502, code: 'UPSTREAM_INVALID_RESPONSE' },
        { fault: { status: 500, body: '{"error":{"code":"internal"}}', headers: { 'content-type': 'application/json' } }, status: 500, body: '{"error":{"code":"internal"}}' },
      ];
      for (const { fault, status, code, body } of cases) {
        const injected = sandbox.faults.inject({ route: 'POST /api/v1/checkout/init', ...fault });
        const response = await send({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json' }, body: '{}' });
        sandbox.faults.remove(injected);
        expect([JSON.stringify(fault), response.status]).toEqual([JSON.stringify(fault), status]);
        if (code) expect(JSON.parse(response.text).error.code).toBe(code);
        else expect(response.text).toBe(body); // the upstream's own answer, unchanged
      }
    });

    it('refuses a stale webhook and one from the future, each with its code, and runs nothing', async () => {
      const now = Math.floor(Date.now() / 1000);
      for (const [timestamp, code] of [[now - 400, 'WEBHOOK_TIMESTAMP_TOO_OLD'], [now + 400, 'WEBHOOK_TIMESTAMP_IN_FUTURE']] as const) {
        const delivery = webhook({ type: 'payment.succeeded', data: { payment_id: 'pay_stale' } }, undefined, timestamp);
        const response = await send(delivery);
        expect([code, response.status, JSON.parse(response.text).error.code]).toEqual([code, 400, code]);
        expect(handled).not.toContain(delivery.eventId);
      }
    });

    it('refuses a malformed webhook (a body that is not JSON, a missing header, a malformed signature) with its code', async () => {
      const notJson = webhook('{"type": oops', 'evt_not_json');
      const noEventId = webhook({ type: 'payment.succeeded' }, 'evt_no_id');
      delete (noEventId.headers as Partial<typeof noEventId.headers>)['x-pay-event-id'];
      const shortSignature = webhook({ type: 'payment.succeeded' }, 'evt_short_sig');
      shortSignature.headers['x-pay-signature'] = shortSignature.headers['x-pay-signature'].slice(0, 40);
      const notJsonCode = adapter.jsonParserInFront ? 'answered by the parser' : 'WEBHOOK_INVALID_JSON';
      const expected = [['evt_not_json', notJsonCode], ['evt_no_id', 'WEBHOOK_MISSING_HEADER'], ['evt_short_sig', 'WEBHOOK_MALFORMED_SIGNATURE']];
      const answers = [];
      for (const delivery of [notJson, noEventId, shortSignature]) {
        const response = await send(delivery);
        expect(response.status).toBe(400);
        answers.push([delivery.eventId, delivery === notJson && adapter.jsonParserInFront ? 'answered by the parser' : JSON.parse(response.text).error.code]);
      }
      expect(answers).toEqual(expected);
      expect(handled.filter((id) => id.startsWith('evt_no') || id.startsWith('evt_short'))).toEqual([]);
    });

    it('verifies a genuine webhook and runs the handler once', async () => {
      const delivery = webhook({ type: 'payment.succeeded', data: { payment_id: 'pay_1' } });
      const response = await send(delivery);
      expect(response.status).toBe(200);
      expect(JSON.parse(response.text)).toEqual({ received: true });
      expect(handled.filter((id) => id === delivery.eventId)).toHaveLength(1);
    });

    it('answers a duplicate without running the handler again', async () => {
      const delivery = webhook({ type: 'payment.succeeded', data: { payment_id: 'pay_2' } });
      expect((await send(delivery)).status).toBe(200);
      const again = await send(delivery);
      expect(again.status).toBe(200);
      expect(JSON.parse(again.text)).toEqual({ received: true, duplicate: true });
      expect(handled.filter((id) => id === delivery.eventId)).toHaveLength(1);
    });

    it('refuses a forged webhook with its code and runs nothing', async () => {
      const delivery = webhook({ type: 'payment.succeeded', data: { payment_id: 'pay_3' } });
      const forged = { ...delivery, body: String(delivery.body).replace('pay_3', 'pay_4') };
      const response = await send(forged);
      expect(response.status).toBe(400);
      expect(JSON.parse(response.text).error.code).toBe('WEBHOOK_SIGNATURE_MISMATCH');
      expect(handled).not.toContain(delivery.eventId);
    });

    it('answers 413 for a webhook over webhooks.maxBodyBytes, and takes one over the JSON routes\' limit under it', async () => {
      const delivery = webhook({ type: 'payment.succeeded', padding: 'x'.repeat(130 * 1024) });
      const response = await send(delivery);
      expect(response.status).toBe(413);
      expect(JSON.parse(response.text).error).toMatchObject({ code: 'BODY_TOO_LARGE', message: expect.stringContaining('webhooks.maxBodyBytes') });
      expect(handled).not.toContain(delivery.eventId);
      const large = webhook({ type: 'payment.succeeded', padding: 'x'.repeat(100 * 1024) });
      expect((await send(large)).status).toBe(200);
      expect(handled).toContain(large.eventId);
      // At the limit exactly, accepted; one byte more, refused.
      const sized = (bytes: number) => webhook({ type: 'payment.succeeded', padding: 'x'.repeat(bytes - JSON.stringify({ type: 'payment.succeeded', padding: '' }).length) });
      const exact = sized(128 * 1024);
      expect(Buffer.byteLength(exact.body as string)).toBe(128 * 1024);
      // Declared too, as most clients do: a check of the declared length holds at the same bound.
      expect((await send({ ...exact, headers: { ...exact.headers, 'content-length': String(128 * 1024) } })).status).toBe(200);
      expect((await send(sized(128 * 1024 + 1))).status).toBe(413);
    });

    it('answers 413 for a JSON route\'s body over maxBodyBytes, before any hook sees it, though webhooks take more', async () => {
      const body = JSON.stringify({ orderId: 'order-too-large', padding: 'x'.repeat(70 * 1024) });
      for (const path of ['/widget-token', '/payments/pay_large/reconcile']) {
        const response = await send({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body });
        expect(response.status).toBe(413);
        expect(JSON.parse(response.text).error.code).toBe('BODY_TOO_LARGE');
      }
      expect(checkouts).not.toContain('order-too-large');
      // At the limit exactly, read.
      const base = JSON.stringify({ orderId: 'order-at-limit', padding: '' });
      const atLimit = JSON.stringify({ orderId: 'order-at-limit', padding: 'x'.repeat(64 * 1024 - base.length) });
      expect((await send({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json' }, body: atLimit })).status).toBe(200);
      expect(checkouts).toContain('order-at-limit');
    });

    it('answers a JSON route whose declared length passes its own limit 413 at once, not after waiting for a body webhooks could take', async () => {
      // No socket to send a bare declaration over (the App Router has its own test); a parser in front waits for the body itself.
      if (!app.webhookUrl || adapter.parserInFront) return;
      const url = new URL(app.webhookUrl.replace(/\/webhooks$/, '/widget-token'));
      // 96 KiB declared: past the JSON routes' 64 KiB, under the webhooks' 128 KiB. No byte of it is sent.
      const head = `POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: ${96 * 1024}\r\n\r\n`;
      const statusLine = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(url.port), url.hostname, () => socket.write(head));
        const timer = setTimeout(() => {
          socket.destroy();
          reject(new Error('no answer within 5 s: the route waited for a body its own limit refuses'));
        }, 5_000);
        socket.once('data', (chunk: Buffer) => {
          clearTimeout(timer);
          socket.destroy();
          resolve(chunk.toString('latin1').split('\r\n')[0]!);
        });
        socket.once('error', reject);
      });
      expect(statusLine).toMatch(/^HTTP\/1\.1 413 /);
    });

    // Decompressed as body parsers do, whether the library reads the stream itself or a parser ran first: a webhook's
    // signature covers the body the sender encoded, and a 4xx may make a sender drop the event.
    it('decompresses a gzip or deflate body, a webhook\'s included, and refuses one that does not decompress (400) or expands past the limit (413)', async () => {
      const gzip = await send({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: gzipSync(JSON.stringify({ orderId: 'order-gzip' })) });
      expect(gzip.status).toBe(200);
      expect(checkouts).toContain('order-gzip');
      const deflated = await send({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json', 'content-encoding': 'deflate' }, body: deflateSync(JSON.stringify({ orderId: 'order-deflate' })) });
      expect(deflated.status).toBe(200);
      expect(checkouts).toContain('order-deflate');
      const delivery = webhook({ type: 'payment.succeeded', data: { note: 'compressed by the sender' } });
      const compressed = await send({ ...delivery, headers: { ...delivery.headers, 'content-encoding': 'gzip' }, body: gzipSync(delivery.body as string) });
      expect(compressed.status).toBe(200);
      expect(handled).toContain(delivery.eventId);
      if (adapter.parserInFront) return; // the parser answers what follows itself
      // Garbage, a gzip cut short (no CRC, no length), raw deflate where zlib's wrapper is due, an empty "gzip": 400, the
      // same on every adapter (a body cut short is not read for what it holds, as a response would be).
      const whole = gzipSync(JSON.stringify({ orderId: 'order-cut' }));
      const rawDeflate = deflateRawSync(JSON.stringify({ orderId: 'order-raw' }));
      for (const [coding, body] of [['gzip', 'not gzip at all'], ['gzip', whole.subarray(0, whole.length - 8)], ['deflate', rawDeflate], ['gzip', '']] as const) {
        const refused = await send({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json', 'content-encoding': coding }, body });
        expect([coding, refused.status, JSON.parse(refused.text).error.message]).toEqual([coding, 400, expect.stringContaining(`could not be decompressed (Content-Encoding: ${coding})`)]);
      }
      expect(checkouts).not.toContain('order-cut');
      if (adapter.listens) {
        const badBrotli = await send({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json', 'content-encoding': 'br' }, body: Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff]) });
        expect(JSON.parse(badBrotli.text).error.message).toContain('could not be decompressed (Content-Encoding: br)');
      }
      // About 100 bytes on the wire that expand past the JSON routes' 64 KiB.
      const bomb = await send({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: gzipSync(`{"orderId":"order-bomb","padding":"${'x'.repeat(200 * 1024)}"}`) });
      expect(bomb.status).toBe(413);
      expect(checkouts).not.toContain('order-bomb');
      // Codings stacked, or one the library does not read, are refused with the codings it takes.
      const stacked = await send({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip, gzip' }, body: gzipSync(gzipSync('{}')) });
      expect(stacked.status).toBe(415);
      expect(JSON.parse(stacked.text).error).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE', message: expect.stringContaining('"gzip, gzip"') });
      // Brotli where node:zlib reads it; the App Router's DecompressionStream has none (415, naming what it takes).
      const br = await send({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json', 'content-encoding': 'br' }, body: brotliCompressSync(JSON.stringify({ orderId: 'order-br' })) });
      expect(br.status).toBe(adapter.listens ? 200 : 415);
    });

    it('refuses a form body on the JSON routes (415) in every framework, whether or not a form parser ran first', async () => {
      const response = await send({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'orderId=order-form' });
      expect(response.status).toBe(415);
      expect(JSON.parse(response.text).error).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE', message: expect.stringContaining("headers: { 'content-type': 'application/json' }") });
      expect(checkouts).not.toContain('order-form');
      // No body, nothing to misread: an empty POST naming a form type (curl -d '') and a GET are answered as usual.
      const empty = await send({ method: 'POST', path: '/payments/pay_form_empty/reconcile', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' });
      expect(JSON.parse(empty.text).error.code).toBe('PAYMENT_NOT_FOUND');
      const get = await send({ method: 'GET', path: '/payments/pay_form_get', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(JSON.parse(get.text).error.code).toBe('PAYMENT_NOT_FOUND');
    });

    it('refuses JSON sent as text/plain or without a Content-Type (415): what a page of another site can send with the shopper\'s cookies, unasked', async () => {
      // Bytes (or a Blob of no type) go out without a Content-Type; text/plain is a fetch() given a string and no headers.
      for (const [type, body] of [['text/plain;charset=UTF-8', '{"orderId":"order-text"}'], [undefined, new TextEncoder().encode('{"orderId":"order-untyped"}')]] as const) {
        for (const path of ['/widget-token', '/payments/pay_text/reconcile']) {
          const response = await send({ method: 'POST', path, headers: type === undefined ? {} : { 'content-type': type }, body });
          expect([type, path, response.status, JSON.parse(response.text).error.code]).toEqual([type, path, 415, 'UNSUPPORTED_MEDIA_TYPE']);
          expect(JSON.parse(response.text).error.message).toContain("a page of another site can send with the shopper's cookies");
        }
      }
      expect(checkouts.filter((id) => id.startsWith('order-text') || id.startsWith('order-untyped'))).toEqual([]);
      // A JSON type of a vendor's (+json) is JSON.
      const vendor = await send({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/vnd.shop+json' }, body: '{"orderId":"order-vendor-json"}' });
      expect(vendor.status).toBe(200);
      expect(checkouts).toContain('order-vendor-json');
    });

    it('refuses a JSON body declared in a charset other than UTF-8 (415), or takes the text a parser decoded', async () => {
      const body = Buffer.from(JSON.stringify({ orderId: 'café-latin1' }), 'latin1');
      const response = await send({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json; charset=iso-8859-1' }, body });
      if (adapter.parserInFront?.latin1 === 'decoded') {
        expect(response.status).toBe(200);
        expect(checkouts).toContain('café-latin1');
      } else {
        expect(response.status).toBe(415);
        if (!adapter.parserInFront) expect(JSON.parse(response.text).error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
        expect(checkouts.some((id) => id.startsWith('caf'))).toBe(false);
      }
      // UTF-8, named either way, is read.
      const utf8 = await send({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json; charset="UTF-8"' }, body: JSON.stringify({ orderId: 'café-utf8' }) });
      expect(utf8.status).toBe(200);
      expect(checkouts).toContain('café-utf8');
    });

    it('answers 405 with Allow for another method on one of its paths', async () => {
      const response = await send({ method: 'GET', path: '/widget-token' });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
      expect(JSON.parse(response.text).error.code).toBe('METHOD_NOT_ALLOWED');
    });

    it('answers HEAD like GET, without the body but with its length', async () => {
      const get = await send({ method: 'GET', path: '/payments/pay_unknown' });
      const head = await send({ method: 'HEAD', path: '/payments/pay_unknown' });
      expect([head.status, head.text]).toEqual([404, '']);
      expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(get.text)));
    });

    it('leaves an unknown path to the framework', async () => {
      // Paths match exactly, case included, as in the core router.
      for (const request of [{ method: 'GET', path: '/not-ours' }, { method: 'POST', path: '/Webhooks' }]) {
        const response = await send(request);
        expect([request.path, response.status]).toEqual([request.path, adapter.fallthrough.status]);
        if (adapter.fallthrough.text) expect(response.text).toMatch(adapter.fallthrough.text);
      }
    });

    // Where a body parser reads the body first, it answers such a body itself.
    if (!adapter.jsonParserInFront && !adapter.parserInFront) it('reads no body a route will not run for: another method, another app\'s path, OPTIONS', async () => {
      // Past both body limits and compressed: read, it would answer 413 or 415 instead of what the path calls for.
      const body = gzipSync('x'.repeat(256 * 1024));
      const headers = { 'content-type': 'application/json', 'content-encoding': 'gzip' };
      const wrongMethod = await send({ method: 'POST', path: '/payments/pay_1', headers, body });
      expect([wrongMethod.status, wrongMethod.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
      const notOurs = await send({ method: 'POST', path: '/not-ours', headers, body });
      expect(notOurs.status).toBe(adapter.fallthrough.status);
      const options = await send({ method: 'OPTIONS', path: '/webhooks', headers, body });
      expect([413, 415]).not.toContain(options.status);
    });

    it('matches no route for a path with an empty segment, rather than the route without it', async () => {
      // Without the empty segment each is GET /payments/:paymentId, of payment 'reconcile' or 'pay_1'. (Not
      // '//webhooks', which Express 4 takes as '/webhooks' below its mount path, nor a trailing '//', which Next
      // redirects away from.)
      for (const request of [{ method: 'GET', path: '/payments//reconcile' }, { method: 'GET', path: '/payments//pay_1' }]) {
        const response = await send(request);
        expect([request.path, response.status]).toEqual([request.path, adapter.fallthrough.status]);
        expect(response.text).not.toMatch(/PAYMENT_NOT_FOUND/);
      }
    });

    if (adapter.mountBehindParser) {
      const behind = adapter.mountBehindParser;
      it(behind.webhooksWork ? 'still verifies webhooks behind a JSON body parser' : 'behind a JSON body parser, names the fix', async () => {
        const parsedApp = await behind.mount(pay);
        try {
          const delivery = webhook({ type: 'payment.succeeded', data: { payment_id: 'pay_5' } });
          const response = await parsedApp.send(delivery);
          responses.push(response.text);
          if (behind.webhooksWork) {
            expect(response.status).toBe(200);
            expect(handled).toContain(delivery.eventId);
          } else {
            // The app's setup, not the delivery: a 5xx, so the sender retries once the app is fixed.
            expect(response.status).toBe(500);
            const { error } = JSON.parse(response.text) as { error: { code: string; message: string } };
            expect(error.code).toBe('WEBHOOK_BODY_NOT_RAW');
            expect(error.message).toMatch(behind.fixNamed);
            // Only this framework's fix: the others' would be noise to its users.
            expect(error.message.match(/(Express|Koa|Next\.js Pages Router|Next\.js App Router): /g)).toHaveLength(1);
            expect(handled).not.toContain(delivery.eventId);
          }
          // The JSON routes work with the parsed body either way: the order id the parser read reaches resolveCheckout.
          const minted = await parsedApp.send({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json' }, body: '{"orderId":"order-parsed"}' });
          expect(minted.status).toBe(200);
          expect(checkouts).toContain('order-parsed');
        } finally {
          await parsedApp.close();
        }
      });
    }

    if (adapter.mountBehindReader) {
      const mountBehindReader = adapter.mountBehindReader;
      it('behind app code that read the stream and kept nothing, refuses the webhook (500) and the JSON route (400), saying so, and answers a GET as ever', async () => {
        const readApp = await mountBehindReader(pay);
        try {
          const delivery = webhook({ type: 'payment.succeeded', data: { payment_id: 'pay_read' } });
          const response = await readApp.send(delivery);
          responses.push(response.text);
          expect(response.status).toBe(500);
          const { error } = JSON.parse(response.text) as { error: { code: string; message: string } };
          expect(error.code).toBe('WEBHOOK_BODY_NOT_RAW');
          expect(error.message).toContain('The request stream was read before paywidget-server got it');
          expect(error.message).toContain('keep the bytes as req.rawBody');
          // No body parser of the framework's to move or turn off: that fix would send its users the wrong way.
          expect(error.message).not.toMatch(/(Express|Koa|Next\.js Pages Router|Next\.js App Router): /);
          expect(handled).not.toContain(delivery.eventId);
          // Not an empty body: resolveCheckout never sees {} in place of the order the shopper named.
          const minted = await readApp.send({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json' }, body: '{"orderId":"order-read"}' });
          expect(minted.status).toBe(400);
          expect(JSON.parse(minted.text).error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('The request stream was read before paywidget-server got it') });
          expect(checkouts).not.toContain('order-read');
          // A GET or HEAD lost nothing (its body is never read): answered as without the reader, not refused.
          for (const method of ['GET', 'HEAD']) {
            const [behind, plain] = await Promise.all([readApp, app].map((mounted) => mounted.send({ method, path: '/payments/pay_unknown' })));
            expect([method, behind!.status, behind!.text]).toEqual([method, plain!.status, plain!.text]);
            expect(behind!.status).not.toBe(400);
          }
        } finally {
          await readApp.close();
        }
      });
    }

    // App Router handlers are driven with Request objects and no port; `next start` covers them over HTTP.
    if (adapter.listens) it('receives the sandbox’s own signed webhooks end to end', async () => {
      sandbox.setWebhookUrl(app.webhookUrl);
      const token = await pay.mintWidgetToken({ amount: 1500, currency: 'EUR', orderId: 'order-e2e' });
      const checkout = await fetch(`${sandbox.paymentUrl}/api/v1/mobile/checkout`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ widget_token: token.widgetToken, card: { number: sandbox.testCards.succeeds, exp_month: 12, exp_year: 2040, cvc: '123' } }),
      });
      const { payment_id } = (await checkout.json()) as { payment_id: string };
      await sandbox.webhooks.idle();
      const deliveries = sandbox.webhooks.delivered.filter((d) => d.paymentId === payment_id);
      expect(deliveries.length).toBeGreaterThan(0);
      expect(deliveries.every((d) => d.ok)).toBe(true);
      expect(handled).toContain(deliveries[0]?.eventId);
    });

    it('never shows a secret in any response', () => {
      expect(responses.length).toBeGreaterThan(5);
      for (const text of responses) {
        expect(text).not.toContain(sandbox.apiKey);
        expect(text).not.toContain(sandbox.webhookSecret);
      }
    });
  });
}

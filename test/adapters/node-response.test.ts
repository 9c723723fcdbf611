/**
 * sendPayResponse writes the head once (writeHead with the library's headers and a Content-Length),
 * so: the length must be the body's bytes, not chunked; headers set by earlier middleware must
 * survive; and on a clash the library's value must win. Checked on the wire, for each Node adapter.
 * Also: a body refused part-way (413) is drained, so the keep-alive connection serves the next request.
 */
import { Agent, createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { apiResolver } from 'next/dist/server/api-utils/node/api-resolver.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPay, PayError, type Pay } from 'paywidget-server';
import { payMiddleware } from 'paywidget-server/express';
import { createPagesHandler } from 'paywidget-server/next';
import { signWebhook } from 'paywidget-server/testing';
import { handleNodeRequest, sendPayResponse } from '../../src/adapters/node/index.js';

const SECRET = 'whsec_test_node_response_1';
// Multi-byte characters: the byte length differs from the string length.
const REFUSAL = 'Bestellung „A-7“ ist storniert – bitte neu anlegen (€ 12,50, 東京)';

/** What "earlier middleware" does: a CORS header, and a cache-control the library must override. */
function earlierMiddleware(res: { setHeader(name: string, value: string): unknown }): void {
  res.setHeader('access-control-allow-origin', '*');
  res.setHeader('cache-control', 'public, max-age=60');
}

const servers: Array<[name: string, serve: (pay: Pay) => Server]> = [
  ['Express 5', (pay) => {
    const app = express();
    app.use((_req, res, next) => {
      earlierMiddleware(res);
      next();
    });
    app.use('/pay', payMiddleware(pay));
    return createServer(app);
  }],
  ['Next Pages Router (apiResolver)', (pay) => {
    const page = { default: createPagesHandler(pay), config: { api: { bodyParser: false } } };
    return createServer((req, res) => {
      earlierMiddleware(res);
      const path = new URL(req.url ?? '/', 'http://x').pathname.replace(/^\/pay\/?/, '').split('/').filter(Boolean);
      void apiResolver(req, res, { path }, page, { previewModeId: '', previewModeEncryptionKey: '', previewModeSigningKey: '', dev: false }, false);
    });
  }],
  ['bare node:http (handleNodeRequest + sendPayResponse)', (pay) => createServer((req, res) => {
    earlierMiddleware(res);
    void handleNodeRequest(pay, req, res, new URL(req.url ?? '/', 'http://x').pathname.replace(/^\/pay/, '')).then((answer) => {
      if (answer) return sendPayResponse(res, answer);
      res.statusCode = 404;
      res.end('not ours');
    });
  })],
];

interface Wire {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** node:http as the client, to see the headers as sent (fetch hides how the body was framed). */
function send(port: number, path: string, headers: Record<string, string>, body: string | Buffer[], agent: Agent | false = false): Promise<Wire & { reusedSocket: boolean }> {
  // An array of chunks goes out chunked (no Content-Length), as a streaming upload would.
  const length = typeof body === 'string' ? { 'content-length': Buffer.byteLength(body) } : {};
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', headers: { ...headers, ...length }, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks), reusedSocket: req.reusedSocket }));
      res.on('error', reject);
    });
    req.on('error', reject);
    for (const chunk of typeof body === 'string' ? [body] : body) req.write(chunk);
    req.end();
  });
}

describe.each(servers)('%s: the response head and the connection', (_name, serve) => {
  let server: Server;
  let port: number;
  let handled = 0;

  beforeAll(async () => {
    const pay = createPay({
      env: {},
      payment: { apiUrl: 'http://127.0.0.1:9', merchantId: 'm', apiKey: 'k', webhookSecret: SECRET },
      resolveCheckout: () => {
        throw new PayError('INVALID_INPUT', REFUSAL, { details: { field: 'orderId' } });
      },
    });
    pay.webhooks.onAny(() => void handled++);
    server = serve(pay);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('gives Content-Length as the byte length of a multi-byte body, and does not answer chunked', async () => {
    const answer = await send(port, '/pay/widget-token', { 'content-type': 'application/json' }, '{"orderId":"A-7"}');
    expect(answer.status).toBe(400);
    const text = answer.body.toString('utf8');
    expect((JSON.parse(text) as { error: { message: string } }).error.message).toBe(REFUSAL);
    expect(answer.body.length).not.toBe(text.length); // the body really is multi-byte
    expect(answer.headers['content-length']).toBe(String(answer.body.length));
    expect(answer.headers['transfer-encoding']).toBeUndefined();
  });

  it('drains a chunked upload refused at the limit (413), so the keep-alive connection answers the next request', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const upload = Array.from({ length: 32 }, () => Buffer.alloc(64 * 1024, 'x')); // 2 MiB, twice the default limit
      const refused = await send(port, '/pay/webhooks', { 'content-type': 'application/json' }, upload, agent);
      expect(refused.status).toBe(413);
      expect(JSON.parse(refused.body.toString('utf8')).error.code).toBe('BODY_TOO_LARGE');
      // Undrained, the upload never finishes, the agent's one socket stays busy and this waits out the test timeout.
      const next = await send(port, '/pay/widget-token', { 'content-type': 'application/json' }, '{"orderId":"A-7"}', agent);
      expect(next.status).toBe(400);
      expect(next.reusedSocket).toBe(true);
    } finally {
      agent.destroy();
    }
  }, 5_000);

  it('keeps a header set by earlier middleware, and its own value wins a clash (cache-control: no-store)', async () => {
    const signed = signWebhook({ payload: { type: 'payment.succeeded', data: { payment_id: 'pay_1' } }, secret: SECRET, eventId: 'evt_head' });
    const answer = await send(port, '/pay/webhooks', { ...signed.headers }, String(signed.body));
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body.toString('utf8'))).toEqual({ received: true });
    expect(handled).toBe(1);
    expect(answer.headers['access-control-allow-origin']).toBe('*');
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.headers['content-length']).toBe(String(answer.body.length));
    expect(answer.headers['transfer-encoding']).toBeUndefined();
  });
});

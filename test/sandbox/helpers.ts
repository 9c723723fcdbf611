import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Sandbox } from '../../src/sandbox/index.js';

export interface JsonResponse {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

export async function call(url: string, init: { method?: string | undefined; body?: unknown; headers?: Record<string, string> | undefined } = {}): Promise<JsonResponse> {
  const headers: Record<string, string> = { ...init.headers };
  let body: string | undefined;
  if (init.body !== undefined) {
    body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(url, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers, body: body ?? null });
  const text = await response.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

export function merchantHeaders(sb: Sandbox): Record<string, string> {
  return { 'x-merchant-id': sb.merchantId, 'x-merchant-api-key': sb.apiKey };
}

export const ORDER = { amount: 1999, currency: 'EUR', order_id: 'order-1001' };

export async function mint(sb: Sandbox, order: Record<string, unknown> = ORDER): Promise<string> {
  const res = await call(`${sb.paymentUrl}/api/v1/checkout/init`, { body: order, headers: merchantHeaders(sb) });
  if (res.status !== 201) throw new Error(`mint failed: ${res.status} ${res.text}`);
  return res.json.widget_token as string;
}

export function card(number: string, overrides: Record<string, unknown> = {}) {
  return { number, exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, cvc: '123', ...overrides };
}

export async function payByCard(sb: Sandbox, number: string): Promise<JsonResponse> {
  const token = await mint(sb);
  return call(`${sb.paymentUrl}/api/v1/mobile/checkout`, { body: { widget_token: token, card: card(number) } });
}

export function statusOf(sb: Sandbox, paymentId: string, clientToken: string): Promise<JsonResponse> {
  return call(`${sb.paymentUrl}/api/v1/payments/${paymentId}/status`, { headers: { authorization: `Bearer ${clientToken}` } });
}

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on 127.0.0.1; `statuses` are answered in turn (a status, or one with a body), then 200. */
export async function startReceiver(statuses: Array<number | { status: number; body: string }> = []) {
  const received: Received[] = [];
  const queue = [...statuses];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const next = queue.shift() ?? 200;
      if (typeof next === 'number') res.writeHead(next).end();
      else res.writeHead(next.status, { 'content-type': 'application/json' }).end(next.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

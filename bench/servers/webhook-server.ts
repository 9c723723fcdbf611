/**
 * One webhook receiver per process, for the throughput benchmark: the library through an adapter,
 * or a hand-written handler doing the same work in the same framework (raw body, HMAC,
 * constant-time compare, dedupe in a Set, JSON parse). Prints its port on stdout.
 *   tsx bench/servers/webhook-server.ts express-library|express-hand|koa-library|koa-hand|koa-hand-guarded|koa-adapter|express-redis
 * express-redis: the library with its stores in Redis (REDIS_URL), under a prefix of its own.
 * koa-adapter: payRouter and the Node bridge over a core that does only the hand-written work: what the adapter costs.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import express from 'express';
import Koa from 'koa';
import { Redis } from 'ioredis';
import getRawBody from 'raw-body';
import { createPay, MemoryClaimStore, type Pay, type PayRequest, type PayResponse } from 'paywidget-server';
import { payMiddleware } from 'paywidget-server/express';
import { payRouter } from 'paywidget-server/koa';
import { redisStores } from 'paywidget-server/redis';

import { BENCH_SECRET } from '../lib.js';
const variant = process.argv[2] ?? '';
// Connected before the port is printed: with the offline queue off, a command sent earlier would fail (503).
const redis = variant.endsWith('-redis') ? new Redis(process.env.REDIS_URL!, { enableOfflineQueue: false, maxRetriesPerRequest: 0 }) : undefined;
if (redis) await once(redis, 'ready');

/** The hand-written reference: what a careful developer writes without a library. */
function handWritten(rawBody: Buffer, headers: Record<string, string | string[] | undefined>, seen: Set<string>): { status: number; body: string } {
  const signature = String(headers['x-pay-signature'] ?? '');
  const timestamp = String(headers['x-pay-timestamp'] ?? '');
  const eventId = String(headers['x-pay-event-id'] ?? '');
  if (!/^[0-9a-f]{64}$/.test(signature) || Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return { status: 400, body: '{"error":"bad"}' };
  const expected = createHmac('sha256', BENCH_SECRET).update(`${timestamp}.`).update(rawBody).digest();
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) return { status: 400, body: '{"error":"bad"}' };
  if (seen.has(eventId)) return { status: 200, body: '{"received":true,"duplicate":true}' };
  JSON.parse(rawBody.toString('utf8'));
  seen.add(eventId);
  return { status: 200, body: '{"received":true}' };
}

interface GuardState {
  /** Signature → the event id it first came with (the replay guard). */
  signatures: Map<string, { eventId: string; expires: number }>;
  /** Event id → its lease, then done. */
  events: Map<string, { done: boolean; expires: number }>;
  /** Payment id → the best status seen (the ledger). */
  payments: Map<string, { status: string; orderId: string | undefined; amount: number | undefined; currency: string | undefined; at: number }>;
}

const STATUS_RANK: Record<string, number> = { succeeded: 2, failed: 1 };

/**
 * The hand-written reference doing the library's extra work as tersely as a developer would: the same
 * checks, then the signature bound to its event id, the event leased and then marked done, and the
 * payment's status recorded unless a better one is known. Unbounded Maps, like the Set above.
 */
function handWrittenGuarded(rawBody: Buffer, headers: Record<string, string | string[] | undefined>, state: GuardState): { status: number; body: string } {
  const signature = String(headers['x-pay-signature'] ?? '');
  const timestamp = String(headers['x-pay-timestamp'] ?? '');
  const eventId = String(headers['x-pay-event-id'] ?? '');
  const now = Date.now();
  if (!/^[0-9a-f]{64}$/.test(signature) || Math.abs(now / 1000 - Number(timestamp)) > 300) return { status: 400, body: '{"error":"bad"}' };
  const expected = createHmac('sha256', BENCH_SECRET).update(`${timestamp}.`).update(rawBody).digest();
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) return { status: 400, body: '{"error":"bad"}' };
  const bound = state.signatures.get(signature);
  if (bound !== undefined && bound.expires > now && bound.eventId !== eventId) return { status: 400, body: '{"error":"replayed"}' };
  if (bound === undefined) state.signatures.set(signature, { eventId, expires: now + 600_000 });
  const claim = state.events.get(eventId);
  if (claim !== undefined && claim.expires > now) return claim.done ? { status: 200, body: '{"received":true,"duplicate":true}' } : { status: 409, body: '{"error":"in progress"}' };
  const lease = { done: false, expires: now + 30_000 };
  state.events.set(eventId, lease);
  const payload = JSON.parse(rawBody.toString('utf8')) as { type?: string; data?: { payment_id?: string; status?: string; order_id?: string; amount?: number; currency?: string } };
  const data = payload.data;
  const status = data?.status ?? /^payment\.(\w+)$/.exec(payload.type ?? '')?.[1];
  if (typeof data?.payment_id === 'string' && status !== undefined) {
    const known = state.payments.get(data.payment_id);
    if (!known || (STATUS_RANK[status] ?? 0) > (STATUS_RANK[known.status] ?? 0)) {
      state.payments.set(data.payment_id, { status, orderId: data.order_id, amount: data.amount, currency: data.currency, at: now });
    }
  }
  lease.done = true;
  lease.expires = now + 86_400_000;
  return { status: 200, body: '{"received":true}' };
}

function listener(): RequestListener {
  const seen = new Set<string>();
  // The hand-written handlers remember every event (a Set that only grows), so the library does too: the default
  // MemoryClaimStore keeps the latest 50,000 events, fewer than a run delivers, and would evict (and warn) instead.
  const stores = redis ? redisStores(redis, { prefix: `paywidget-bench:${process.pid}:` }) : { claims: new MemoryClaimStore({ maxEntries: 10_000_000 }) };
  const pay = createPay({ env: {}, payment: { apiUrl: 'http://127.0.0.1:9', merchantId: 'bench', apiKey: 'bench', webhookSecret: BENCH_SECRET }, stores });
  pay.webhooks.onAny(() => {});
  switch (variant) {
    case 'express-library':
    case 'express-redis': {
      const app = express();
      app.use('/pay', payMiddleware(pay));
      return app;
    }
    case 'express-hand': {
      const app = express();
      // The library answers without an ETag: hashing each answer for one would be work the reference alone does.
      app.set('etag', false);
      app.post('/pay/webhooks', express.raw({ type: '*/*', limit: '1mb' }), (req, res) => {
        const result = handWritten(req.body as Buffer, req.headers, seen);
        res.status(result.status).type('application/json').send(result.body);
      });
      return app;
    }
    case 'koa-library': {
      const app = new Koa();
      app.use(payRouter(pay, { prefix: '/pay' }).routes());
      return app.callback();
    }
    case 'koa-adapter': {
      // The same instance, its webhook route answered by the hand-written handler instead of the core's.
      const headers = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };
      const handle = async (request: PayRequest): Promise<PayResponse | null> => {
        if (request.path !== '/webhooks') return pay.handle(request);
        // Node's incoming headers and the body raw-body read: what the Node bridge hands the core.
        const result = handWritten(request.rawBody as Buffer, request.headers as Record<string, string | undefined>, seen);
        return { status: result.status, headers: { ...headers }, body: result.body };
      };
      const app = new Koa();
      app.use(payRouter({ ...pay, handle } as Pay, { prefix: '/pay' }).routes());
      return app.callback();
    }
    case 'koa-hand':
    case 'koa-hand-guarded': {
      const app = new Koa();
      const router = new Router({ prefix: '/pay' });
      const state: GuardState = { signatures: new Map(), events: new Map(), payments: new Map() };
      router.post('/webhooks', async (ctx) => {
        const rawBody = await getRawBody(ctx.req, { limit: '1mb' });
        const result = variant === 'koa-hand' ? handWritten(rawBody, ctx.headers, seen) : handWrittenGuarded(rawBody, ctx.headers, state);
        ctx.status = result.status;
        ctx.type = 'application/json';
        ctx.body = result.body;
      });
      app.use(router.routes());
      return app.callback();
    }
    default:
      throw new Error(`unknown variant ${variant}`);
  }
}

const server = createServer(listener());
server.listen(0, '127.0.0.1', () => console.log((server.address() as AddressInfo).port));
process.on('SIGTERM', () => process.exit(0)); // lets --cpu-prof write its profile
// Started by the bench (an IPC channel): when the bench goes, even killed, so do we, freeing the port.
if (process.send) process.on('disconnect', () => process.exit(0));

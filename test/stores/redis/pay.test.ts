/**
 * Several pay instances sharing one Redis (and the sandbox): one admin token between them, one run
 * per webhook event, one ledger, resumable syncs; and what still works while Redis is down.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Pay, PayOptions } from 'paywidget-server';
import { redisStores } from 'paywidget-server/redis';
import type { Sandbox } from 'paywidget-server/sandbox';
import { signWebhook } from 'paywidget-server/testing';
import { captureLogger } from '../../helpers/capture-logger.js';
import { connectedRedis, deletePrefix, startRedisServer, useRedisUrl, type RedisServer } from '../../helpers/redis-server.js';
import { commerceSandbox, payFor, range } from '../../core/commerce/helpers.js';

let url: string;
let done: () => Promise<void>;
const clients: Redis[] = [];
const runPrefix = `test:${randomUUID()}:`;
let sb: Sandbox | undefined;

beforeAll(async () => {
  ({ url, done } = await useRedisUrl());
});
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});
afterAll(async () => {
  if (clients[0]) await deletePrefix(clients[0], runPrefix);
  for (const client of clients) client.disconnect();
  await done?.();
});

async function client(at = url): Promise<Redis> {
  const c = await connectedRedis(at);
  c.on('error', () => {});
  clients.push(c);
  return c;
}

/** `count` pay instances, each with its own Redis connection, sharing the keys under one prefix. */
async function instances(count: number, overrides: Partial<PayOptions> = {}, at = url): Promise<Pay[]> {
  const prefix = `${runPrefix}${randomUUID()}:`;
  return Promise.all(Array.from({ length: count }, async () => payFor(sb!, { stores: redisStores(await client(at), { prefix }), ...overrides })));
}

async function deliver(pay: Pay, signed: ReturnType<typeof signWebhook>) {
  const response = await pay.handle({ method: 'POST', path: '/webhooks', headers: signed.headers, rawBody: signed.body });
  return { status: response!.status, body: JSON.parse(String(response!.body)) as Record<string, unknown> };
}

describe('admin token shared through Redis', () => {
  it('two instances use one token; concurrent refreshes on both send one token request', async () => {
    sb = await commerceSandbox({ orders: 30 });
    sb.commerce.faults.inject({ route: 'POST /rest/default/V1/integration/admin/token', latencyMs: 100, times: Infinity });
    const [a, b] = await instances(2);
    await Promise.all([a!.orders.get(1), b!.orders.get(2), a!.orders.get(3), b!.orders.get(4)]);
    expect(sb.commerce.stats().tokenRequests).toBe(1);

    // Every call on both instances meets the expired token: one refresh between them.
    sb.commerce.expireTokens();
    sb.commerce.resetStats();
    const orders = await Promise.all(range(1, 20).map((id) => (id % 2 ? a! : b!).orders.get(id)));
    expect(orders.map((o) => o.entity_id)).toEqual(range(1, 20));
    // At most one 401 a call: a call that reads the store after its instance met the dead token waits for the refresh instead.
    const { tokenRequests, unauthorized } = sb.commerce.stats();
    expect(tokenRequests).toBe(1);
    expect(unauthorized).toBeGreaterThanOrEqual(1);
    expect(unauthorized).toBeLessThanOrEqual(20);

    // A third instance, started later, finds the token in Redis.
    const [c] = await instances(1);
    const shared = await instances(1); // another prefix: its own token
    sb.commerce.resetStats();
    await c!.orders.get(5);
    expect(sb.commerce.stats().tokenRequests).toBe(1);
    await shared[0]!.orders.get(5);
    expect(sb.commerce.stats().tokenRequests).toBe(2);
  });

  it('a refused login is tried once for every instance sharing Redis, not once per instance or per call', async () => {
    sb = await commerceSandbox({ orders: 5 });
    const fleet = await instances(3, { commerce: { password: 'wrong-password' } });
    const results = await Promise.allSettled(fleet.flatMap((pay) => [pay.orders.get(1), pay.orders.get(2)]));
    expect(results.map((r) => (r.status === 'rejected' ? (r.reason as { code: string }).code : 'fulfilled'))).toEqual(Array(6).fill('COMMERCE_AUTH_FAILED'));
    expect(sb.commerce.stats().tokenRequests).toBe(1);
    // Within the minute, later calls on any instance fail at once with the remembered refusal.
    for (const pay of fleet) await expect(pay.orders.get(3)).rejects.toThrow(/Remembered from the login refused at/);
    expect(sb.commerce.stats().tokenRequests).toBe(1);
  });
});

describe('webhooks across instances sharing Redis', () => {
  it('one delivery sent to three instances at once runs the handlers once; the ledger is shared', async () => {
    sb = await commerceSandbox({ orders: 1 });
    const pays = await instances(3);
    let runs = 0;
    for (const pay of pays) pay.webhooks.onAny(() => new Promise((resolve) => setTimeout(() => resolve(runs++), 50)));
    const signed = signWebhook({ payload: { type: 'payment.succeeded', data: { payment_id: 'pay_shared', order_id: '000000001', amount: 1999, currency: 'EUR' } }, secret: sb.webhookSecret, eventId: 'evt_shared' });
    const answers = await Promise.all(pays.map((pay) => deliver(pay, signed)));
    expect(runs).toBe(1);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409]);
    const again = await Promise.all(pays.map((pay) => deliver(pay, signed)));
    expect(again.map((a) => a.body)).toEqual(Array(3).fill({ received: true, duplicate: true }));
    expect(runs).toBe(1);
    for (const pay of pays) expect(await pay.payments.get('pay_shared')).toMatchObject({ status: 'succeeded', outcome: 'confirmed', source: 'webhook', orderId: '000000001' });
  });
});

describe('the payment ledger in Redis', () => {
  it('files no payment under an order id with half a surrogate pair: Redis would store it as U+FFFD, another order\'s id', async () => {
    sb = await commerceSandbox({ orders: 1 });
    const [pay] = await instances(1);
    const events = [['pay_lone', 'order-\\ud800'], ['pay_replacement', 'order-\\ufffd']].map(([paymentId, orderId]) => signWebhook({
      // The JSON escapes as a payment service sends them: the parsed order ids differ only there.
      payload: `{"type":"payment.succeeded","data":{"payment_id":"${paymentId}","order_id":"${orderId}","amount":100,"currency":"EUR"}}`,
      secret: sb!.webhookSecret,
    }));
    for (const signed of events) expect((await deliver(pay!, signed)).status).toBe(200);
    expect((await pay!.payments.byOrder('order-\ufffd')).map((entry) => entry.paymentId)).toEqual(['pay_replacement']);
    // Nor is another order's payment read back for it (the key would be the other order's).
    expect(await pay!.payments.byOrder('order-\ud800')).toEqual([]);
    const lone = await pay!.payments.get('pay_lone');
    expect(lone).toMatchObject({ outcome: 'confirmed' });
    expect(lone!.orderId).toBeUndefined();
  });
});

describe('two merchants on one Redis', () => {
  const merchant = (merchantId: string, stores: PayOptions['stores']) => payFor(sb!, { stores, payment: { apiUrl: sb!.paymentUrl, merchantId, apiKey: sb!.apiKey, webhookSecret: sb!.webhookSecret } });

  it('refuses one client and prefix to a second merchant, and keeps their events and ledgers apart with a prefix each', async () => {
    sb = await commerceSandbox({ orders: 1 });
    const redis = await client();
    const shared = `${runPrefix}${randomUUID()}:`;
    merchant('shop_a', redisStores(redis, { prefix: shared }));
    let refused: unknown;
    try {
      merchant('shop_b', redisStores(redis, { prefix: shared })); // a second call: the same keys all the same
    } catch (error) {
      refused = error;
    }
    expect(refused).toMatchObject({ code: 'CONFIG_INVALID', details: { options: ['stores.claims'] } });

    // A tenant built with a Redis client of its own, on the same server, database and prefix: the same keys too.
    const ownClient = await client();
    expect(() => merchant('shop_b', redisStores(ownClient, { prefix: shared }))).toThrow(`stores.claims (Redis prefix '${shared}') is already used in this process by a Pay instance for merchant shop_a; this one is for shop_b.`);

    const a = merchant('shop_a', redisStores(redis, { prefix: `${runPrefix}${randomUUID()}:` }));
    const b = merchant('shop_b', redisStores(redis, { prefix: `${runPrefix}${randomUUID()}:` }));
    const ran: string[] = [];
    a.webhooks.onAny(() => void ran.push('a'));
    b.webhooks.onAny(() => void ran.push('b'));
    // Event ids and payment ids are each service account's own: two merchants can both have evt_1.
    const event = (paymentId: string) => signWebhook({ payload: { type: 'payment.succeeded', data: { payment_id: paymentId, order_id: '000000001', amount: 1999, currency: 'EUR' } }, secret: sb!.webhookSecret, eventId: 'evt_1' });
    expect((await deliver(a, event('pay_1'))).body).toEqual({ received: true });
    expect((await deliver(b, event('pay_1b'))).body).toEqual({ received: true }); // on shared keys: { duplicate: true }, never run
    expect(ran).toEqual(['a', 'b']);
    expect(await b.payments.get('pay_1')).toBeUndefined();
    expect(await b.payments.byOrder('000000001')).toMatchObject([{ paymentId: 'pay_1b' }]);
  });

  it('two shops on one Magento user, a prefix each, share one admin-token store: one refused login for both, not one each', async () => {
    sb = await commerceSandbox({ orders: 2 });
    const redis = await client();
    const adminTokens = redisStores(redis, { prefix: `${runPrefix}${randomUUID()}:` }).adminTokens;
    const wrong = (merchantId: string) => payFor(sb!, {
      stores: { ...redisStores(redis, { prefix: `${runPrefix}${randomUUID()}:` }), adminTokens },
      payment: { apiUrl: sb!.paymentUrl, merchantId, apiKey: sb!.apiKey, webhookSecret: sb!.webhookSecret },
      commerce: { password: 'the-old-password' },
    });
    const [a, b] = [wrong('shop_a'), wrong('shop_b')];
    await expect(a.orders.get(1)).rejects.toMatchObject({ code: 'COMMERCE_AUTH_FAILED' });
    await expect(b.orders.get(1)).rejects.toThrow(/Remembered from the login refused at/);
    expect(sb.commerce.stats().tokenRequests).toBe(1);
  });
});

describe('order sync checkpoints in Redis', () => {
  it('a sync stopped on one instance resumes on another', async () => {
    sb = await commerceSandbox({ orders: 250 });
    const [a, b] = await instances(2);
    const first: number[] = [];
    const crash = new Error('instance stopped');
    await expect(a!.orders.sync({ checkpoint: 'nightly', pageSize: 50, onOrder: (o) => {
      if (o.entity_id === 120) throw crash;
      first.push(o.entity_id);
    } })).rejects.toBe(crash);
    const second: number[] = [];
    const summary = await b!.orders.sync({ checkpoint: 'nightly', pageSize: 50, onOrder: (o) => void second.push(o.entity_id) });
    expect(summary).toMatchObject({ resumedFrom: 119, complete: true });
    expect(second).toEqual(range(120, 250));
    expect([...first, ...second]).toEqual(range(1, 250));
  });

  it('one run per checkpoint across instances: an overlapping run elsewhere is refused', async () => {
    sb = await commerceSandbox({ orders: 150 });
    const [a, b] = await instances(2);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let reached!: () => void;
    const atGate = new Promise<void>((resolve) => (reached = resolve));
    const running = a!.orders.sync({ checkpoint: 'nightly', pageSize: 50, onOrder: async (o) => {
      if (o.entity_id === 60) {
        reached();
        await gate;
      }
    } });
    await atGate;
    const delivered: number[] = [];
    await expect(b!.orders.sync({ checkpoint: 'nightly', onOrder: (o) => void delivered.push(o.entity_id) })).rejects.toMatchObject({ code: 'SYNC_IN_PROGRESS', status: 409 });
    expect(delivered).toEqual([]);
    open();
    expect(await running).toMatchObject({ delivered: 150, complete: true });
    // Freed when the run ended: the other instance takes over, with nothing new to deliver.
    expect(await b!.orders.sync({ checkpoint: 'nightly', onOrder: (o) => void delivered.push(o.entity_id) })).toMatchObject({ delivered: 0, resumedFrom: 150 });
  });
});

describe('while Redis is down', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('webhooks answer 503 and run nothing; minting and order reads go on; then the retry is processed once', async () => {
    sb = await commerceSandbox({ orders: 5 });
    const logger = captureLogger();
    const [pay] = (await instances(1, {
      logger,
      resolveCheckout: async () => ({ amount: 1999, currency: 'EUR', orderId: (await pay.orders.get(1)).increment_id }),
    }, server.url)) as [Pay];
    let runs = 0;
    pay.webhooks.onAny(() => void runs++);
    const signed = signWebhook({ payload: { type: 'order.note' }, secret: sb.webhookSecret, eventId: 'evt_outage' });

    await server.kill();
    const down = await deliver(pay, signed);
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({ error: { code: 'STORE_UNAVAILABLE' } });
    expect(runs).toBe(0);

    // The token is fetched without the store, then kept by the instance itself.
    expect((await pay.orders.get(2)).entity_id).toBe(2);
    expect((await pay.orders.get(3)).entity_id).toBe(3);
    expect(sb.commerce.stats().tokenRequests).toBe(1);
    const minted = await pay.handle({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json' }, rawBody: '{}' });
    expect(minted?.status).toBe(200);
    expect(logger.text()).toContain('admin token store unreachable');

    await server.restart();
    for (let i = 0; i < 100 && (await deliver(pay, signed).then((a) => a.status)) === 503; i++) await new Promise((r) => setTimeout(r, 50));
    expect(runs).toBe(1);
    expect((await deliver(pay, signed)).body).toEqual({ received: true, duplicate: true });
    expect(runs).toBe(1);
  });
});

describe('pay.drain() at shutdown', () => {
  it('waits for a done mark retried after a Redis blip, so a shutdown right after the answer does not drop it', async () => {
    sb = await commerceSandbox({ orders: 1 });
    const connection = await client();
    const observer = await client();
    const prefix = `${runPrefix}${randomUUID()}:`;
    const pay = payFor(sb, { stores: redisStores(connection, { prefix }), logger: captureLogger() });
    let runs = 0;
    pay.webhooks.onAny(() => {
      runs += 1;
      connection.disconnect(true); // the connection drops while the handler runs, and comes back
    });
    const signed = signWebhook({ payload: { type: 'payment.succeeded', data: { payment_id: 'pay_drain' } }, secret: sb.webhookSecret, eventId: `evt_${randomUUID()}` });

    expect(await deliver(pay, signed)).toEqual({ status: 200, body: { received: true } });
    const key = `${prefix}claim:evt:${signed.headers['x-pay-event-id']}`;
    // Answered, but its done mark is still being retried: a process that exited now would leave the lease.
    expect(await observer.get(key)).not.toBe('done');
    await pay.drain();
    expect(await observer.get(key)).toBe('done');
    expect(await deliver(pay, signed)).toEqual({ status: 200, body: { received: true, duplicate: true } });
    expect(runs).toBe(1);
    await expect(pay.drain()).resolves.toBeUndefined(); // nothing pending: at once
  });
});

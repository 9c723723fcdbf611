/**
 * Webhook verification per call, 1 KiB JSON body, parse included:
 * the library against the floor (createHmac + timingSafeEqual + JSON.parse by hand) and Stripe's
 * constructEvent for the same scheme. Sync figures compare the synchronous cores; awaited figures
 * time N awaited calls of each, the way a request handler runs them.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import Stripe from 'stripe';
import { createPay } from '../src/core/pay.js';
import { selectHmac, type HmacFactory } from '../src/core/webhooks/hmac.js';
import { resolveWebhookOptions } from '../src/core/webhooks/options.js';
import { verifyDelivery } from '../src/core/webhooks/verify.js';
import { computeSignature } from '../src/core/webhooks/signature.js';
import { printTable, type Figure } from './lib.js';

const SECRET = 'whsec_bench_0123456789abcdef0123456789';

type Candidate = { name: string; sync?: () => unknown; awaited?: () => Promise<unknown> };

/**
 * Median microseconds per call of each candidate. Rounds are interleaved (every candidate once per
 * round, in turn) so that a busy moment on a shared machine slows all of them, not the one being timed.
 */
async function interleaved(candidates: Candidate[], { iterations = 5_000, rounds = 21 } = {}): Promise<Map<string, number>> {
  const samples = new Map<string, number[]>(candidates.map((c) => [c.name, []]));
  const batch = async (c: Candidate, n: number) => {
    const start = process.hrtime.bigint();
    if (c.sync) for (let i = 0; i < n; i++) c.sync();
    else for (let i = 0; i < n; i++) await c.awaited!();
    return Number(process.hrtime.bigint() - start) / 1000 / n;
  };
  for (const c of candidates) await batch(c, iterations); // warm-up
  for (let r = 0; r < rounds; r++) for (const c of candidates) samples.get(c.name)!.push(await batch(c, iterations));
  return new Map([...samples].map(([name, values]) => [name, values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!]));
}

function oneKibJson(): Buffer {
  const event = { id: 'evt_bench', type: 'payment.succeeded', created: 1717171717, data: { payment_id: 'pay_123', order_id: 'ord_456', amount: 1999, currency: 'EUR', note: '' } };
  const base = JSON.stringify(event).length;
  event.data.note = 'x'.repeat(1024 - base);
  const body = Buffer.from(JSON.stringify(event));
  if (body.length !== 1024) throw new Error(`bench body is ${body.length} bytes, not 1024`);
  return body;
}

export async function benchWebhookVerify(): Promise<void> {
  const body = oneKibJson();
  const timestamp = String(Math.floor(Date.now() / 1000));
  const headers = {
    'content-type': 'application/json',
    'x-pay-signature': computeSignature(SECRET, timestamp, body),
    'x-pay-timestamp': timestamp,
    'x-pay-event-id': 'evt_bench',
  };
  const input = { rawBody: body, headers };

  // The floor: what a hand-written verifier cannot go below.
  const floor = () => {
    const signature = headers['x-pay-signature'];
    const expected = createHmac('sha256', SECRET).update(`${headers['x-pay-timestamp']}.`).update(body).digest();
    if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) throw new Error('mismatch');
    return JSON.parse(body.toString('utf8')) as unknown;
  };

  // The library: the public async verify, and the synchronous core it runs on Node.
  const pay = createPay({ payment: { apiUrl: 'http://127.0.0.1:9', merchantId: 'm', apiKey: 'k', webhookSecret: SECRET }, env: {} });
  const factory = (await selectHmac()) as HmacFactory;
  const hmac = factory([SECRET]);
  if (hmac.runtime !== 'node') throw new Error('expected the node:crypto path on Node');
  const policy = { toleranceSeconds: 300, maxBodyBytes: 1024 * 1024, now: Date.now, secretCount: 1, payloadEventId: resolveWebhookOptions().payloadEventId };
  const verifySync = () => verifyDelivery(hmac, policy, input);

  // Stripe: `t=<ts>,v1=<hex>` over `${t}.${body}`, same secret, same body.
  const stripe = new Stripe('sk_test_bench');
  const stripeHeader = stripe.webhooks.generateTestHeaderString({ payload: body.toString('utf8'), secret: SECRET, timestamp: Number(timestamp) });
  const stripeVerify = () => stripe.webhooks.constructEvent(body, stripeHeader, SECRET);

  // Every candidate must accept the delivery and agree on the payload before it is timed.
  const expected = JSON.stringify(floor());
  const results = [verifySync(), await pay.webhooks.verify(input), stripeVerify()];
  const [sync, viaPay, viaStripe] = results as [{ payload: unknown }, { payload: unknown }, unknown];
  if (JSON.stringify(sync.payload) !== expected || JSON.stringify(viaPay.payload) !== expected || JSON.stringify(viaStripe) !== expected) {
    throw new Error('the candidates disagree on the payload');
  }

  const t = await interleaved([
    { name: 'floor (sync)', sync: floor },
    { name: 'library verify core (sync)', sync: verifySync },
    { name: 'Stripe constructEvent (sync)', sync: stripeVerify },
    { name: 'floor (awaited)', awaited: async () => floor() },
    { name: 'pay.webhooks.verify (awaited)', awaited: () => pay.webhooks.verify(input) },
    { name: 'Stripe constructEvent (awaited)', awaited: async () => stripeVerify() },
  ]);
  const figure = (name: string, reference?: string, target?: string): Figure => ({ name, unit: 'µs', value: t.get(name)!, ...(reference ? { reference } : {}), ...(target ? { target } : {}) });
  const figures: Figure[] = [
    figure('floor (sync)'),
    figure('library verify core (sync)', 'floor (sync)', '≤ 1.15×'),
    figure('Stripe constructEvent (sync)', 'floor (sync)'),
    figure('floor (awaited)'),
    figure('pay.webhooks.verify (awaited)', 'floor (awaited)', '≤ 1.15×'),
    figure('Stripe constructEvent (awaited)', 'floor (awaited)'),
  ];
  printTable(`Webhook verification, ${body.length}-byte JSON body, parse included (Node ${process.versions.node})`, figures);
}

/**
 * Webhook route throughput with autocannon against 127.0.0.1: the library through payMiddleware
 * and payRouter, each next to a hand-written handler doing the same work in the same framework.
 * Each server runs in its own process; every request is a distinct, correctly signed delivery.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import autocannon from 'autocannon';
import { signWebhook } from '../src/testing/index.js';
import { BENCH_SECRET, printTable, type Figure } from './lib.js';


const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 2);
const ROUNDS = 5;
const CONNECTIONS = 50;
/** Enough for every request one server gets in a comparison (11 s at up to 18,000 req/s), so none is sent twice. */
const DELIVERIES = 200_000;

async function startServer(variant: string): Promise<{ port: number; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/servers/webhook-server.ts', variant], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
  return { port: Number(chunk.toString().trim()), child };
}

/** Deliveries signed up front so the load generator does no crypto while measuring. */
export function deliveries(count: number) {
  const payload = { type: 'payment.succeeded', data: { payment_id: 'pay_bench', order_id: 'ord_bench', amount: 1999, currency: 'EUR', note: 'x'.repeat(800) } };
  return Array.from({ length: count }, (_, i) => {
    const signed = signWebhook({ payload: { ...payload, id: `evt_${i}` }, secret: BENCH_SECRET, eventId: `evt_${i}` });
    return { body: signed.body as string, headers: signed.headers };
  });
}

/** Requests per second of one running server over `seconds`, every request a distinct delivery. */
async function load(port: number, seconds: number, prepared: ReturnType<typeof deliveries>, cursor: { next: number }): Promise<number> {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/pay/webhooks`,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [{ method: 'POST', setupRequest: (request) => {
      const delivery = prepared[cursor.next++ % prepared.length]!;
      return { ...request, body: delivery.body, headers: delivery.headers };
    } }],
  });
  if (result.non2xx > 0) throw new Error(`${result.non2xx} non-2xx answers on port ${port}`);
  // A delivery sent again is a duplicate, which a receiver answers without parsing: not the same work.
  if (cursor.next > prepared.length) throw new Error(`a server took more than ${prepared.length} requests, so some deliveries were sent twice; raise DELIVERIES in bench/webhook-throughput.ts`);
  return result.requests.average;
}

/**
 * The library and its hand-written reference, both running, measured in alternating rounds and
 * compared by their medians, so a busy moment on a 2-core machine does not fall on one side only.
 */
export async function compare(reference: string, candidate: string, prepared: ReturnType<typeof deliveries>): Promise<[number, number]> {
  const servers = await Promise.all([startServer(reference), startServer(candidate)]);
  try {
    const cursors = servers.map(() => ({ next: 0 }));
    for (const [i, { port }] of servers.entries()) await load(port, 1, prepared, cursors[i]!); // warm-up
    const samples: number[][] = [[], []];
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, { port }] of servers.entries()) samples[i]!.push(await load(port, DURATION_S, prepared, cursors[i]!));
    }
    const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    return [median(samples[0]!), median(samples[1]!)];
  } finally {
    for (const { child } of servers) child.kill();
  }
}

export async function benchWebhookThroughput(): Promise<void> {
  const prepared = deliveries(DELIVERIES);
  const figures: Figure[] = [];
  for (const framework of ['express', 'koa']) {
    const [hand, library] = await compare(`${framework}-hand`, `${framework}-library`, prepared);
    const adapter = framework === 'express' ? 'payMiddleware' : 'payRouter';
    figures.push({ name: `${framework} hand-written`, unit: 'req/s', value: hand });
    figures.push({ name: `${framework} ${adapter}`, unit: 'req/s', value: library, reference: `${framework} hand-written`, target: '≥ 0.90×' });
  }
  printTable(`Webhook route throughput (${CONNECTIONS} connections, median of ${ROUNDS} alternating ${DURATION_S} s rounds, distinct signed ~1 KiB deliveries)`, figures);

  // Koa costs little enough that the library's extra work shows. The same route against a hand-written
  // handler that does that work too: the replay guard, the lease, the payment record.
  const [guarded, library] = await compare('koa-hand-guarded', 'koa-library', prepared);
  printTable('The same on Koa, against a hand-written handler with the library\'s guarantees', [
    { name: 'koa hand-written, same guarantees', unit: 'req/s', value: guarded },
    { name: 'koa payRouter', unit: 'req/s', value: library, reference: 'koa hand-written, same guarantees' },
  ]);
}

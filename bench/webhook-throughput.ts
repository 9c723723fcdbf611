/**
 * Webhook route throughput with autocannon against 127.0.0.1: the library through payMiddleware
 * and payRouter, each next to a hand-written handler doing the same work in the same framework.
 * Each server runs in its own process; every request is a distinct, correctly signed delivery.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import autocannon from 'autocannon';
import { signWebhook } from '../src/testing/index.js';
import { BENCH_SECRET, printTable, type Figure, type RatioRange } from './lib.js';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 2);
const ROUNDS = 5;
const CONNECTIONS = 50;
/**
 * Deliveries signed before each run: more than one run's worth at this rate, so the load generator
 * does no crypto while measuring. A faster server gets the rest signed as they go (and a note).
 */
const SIGNED_AHEAD_PER_S = 45_000;
const START_TIMEOUT_MS = 30_000;

interface Server {
  port: number;
  child: ChildProcess;
}

/**
 * One bench server in a process of its own, once it printed its port. It exits when its IPC channel
 * closes, so it does not outlive this process; one that dies or stays silent fails the bench.
 */
async function startServer(variant: string): Promise<Server> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/servers/webhook-server.ts', variant], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  let timer: NodeJS.Timeout | undefined;
  try {
    const port = await new Promise<number>((resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`the ${variant} bench server printed no port within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
      child.stdout!.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`the ${variant} bench server exited with ${code} before it printed its port`)));
    });
    return { port, child };
  } catch (error) {
    child.kill();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** Servers started together; if one fails, the others are stopped before the error goes on. */
async function startServers(variants: string[]): Promise<Server[]> {
  const started = await Promise.allSettled(variants.map(startServer));
  const failed = started.find((result) => result.status === 'rejected');
  if (!failed) return started.map((result) => (result as PromiseFulfilledResult<Server>).value);
  await Promise.all(started.map((result) => result.status === 'fulfilled' && stopped(result.value.child)));
  throw failed.reason;
}

const PAYLOAD = { type: 'payment.succeeded', data: { payment_id: 'pay_bench', order_id: 'ord_bench', amount: 1999, currency: 'EUR', note: 'x'.repeat(800) } };
/** Event ids never repeat within the process: a delivery sent twice is a duplicate, which a receiver answers without parsing. */
let nextEventId = 0;

function signedDelivery(): { body: string; headers: Record<string, string> } {
  const id = `evt_${nextEventId++}`;
  const signed = signWebhook({ payload: { ...PAYLOAD, id }, secret: BENCH_SECRET, eventId: id });
  return { body: signed.body as string, headers: signed.headers };
}

/** Requests per second of one running server over `seconds`, every request a distinct, freshly signed delivery. */
async function load(port: number, seconds: number): Promise<number> {
  const ahead = Array.from({ length: Math.ceil(seconds * SIGNED_AHEAD_PER_S) }, signedDelivery);
  let sent = 0;
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/pay/webhooks`,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [{ method: 'POST', setupRequest: (request) => {
      const delivery = ahead[sent++] ?? signedDelivery();
      return { ...request, body: delivery.body, headers: delivery.headers };
    } }],
  });
  // Failures counted as throughput would flatter a failing server.
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
    throw new Error(`port ${port} answered ${result.non2xx} non-2xx, with ${result.errors} errors and ${result.timeouts} time-outs`);
  }
  if (sent > ahead.length) console.error(`note: port ${port} took ${sent} requests in ${seconds} s; ${sent - ahead.length} were signed while measuring (raise SIGNED_AHEAD_PER_S in bench/webhook-throughput.ts)`);
  return result.requests.average;
}

/**
 * The library and its hand-written reference, both running, measured in alternating rounds and
 * compared by their medians, so a busy moment on a 2-core machine does not fall on one side only.
 * Also the lowest and highest ratio of one round's pair: how far a single run could be off.
 */
export async function compare(reference: string, candidate: string): Promise<[number, number, RatioRange]> {
  const servers = await startServers([reference, candidate]);
  try {
    for (const { port } of servers) await load(port, 1); // warm-up
    const samples: number[][] = [[], []];
    for (let round = 0; round < ROUNDS; round++) {
      // Each goes first in every other round: whichever runs second may find the machine warmer or busier.
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      for (const i of order) samples[i]!.push(await load(servers[i]!.port, DURATION_S));
    }
    const ratios = samples[1]!.map((value, round) => value / samples[0]![round]!);
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    return [median(samples[0]!), median(samples[1]!), [Math.min(...ratios), Math.max(...ratios)]];
  } finally {
    // Waited for: the last round's requests may still be running (the Redis bench deletes its keys next).
    await Promise.all(servers.map(({ child }) => stopped(child)));
  }
}

async function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exit = once(child, 'exit');
  child.kill();
  await exit;
}

export async function benchWebhookThroughput(): Promise<void> {
  const figures: Figure[] = [];
  for (const framework of ['express', 'koa']) {
    const [hand, library, rounds] = await compare(`${framework}-hand`, `${framework}-library`);
    const adapter = framework === 'express' ? 'payMiddleware' : 'payRouter';
    figures.push({ name: `${framework} hand-written`, unit: 'req/s', value: hand });
    figures.push({ name: `${framework} ${adapter}`, unit: 'req/s', value: library, reference: `${framework} hand-written`, rounds, target: '≥ 0.90×' });
  }
  printTable(`Webhook route throughput (${CONNECTIONS} connections, median of ${ROUNDS} alternating ${DURATION_S} s rounds, distinct signed ~1 KiB deliveries)`, figures);

  // Koa costs little enough that the library's extra work shows. The same route against a hand-written
  // handler that does that work too: the replay guard, the lease, the payment record.
  const [guarded, library, rounds] = await compare('koa-hand-guarded', 'koa-library');
  printTable('The same on Koa, against a hand-written handler with the library\'s guarantees', [
    { name: 'koa hand-written, same guarantees', unit: 'req/s', value: guarded },
    { name: 'koa payRouter', unit: 'req/s', value: library, reference: 'koa hand-written, same guarantees', rounds },
  ]);

  // Where the gap lies: payRouter and the Node bridge over a core doing only the hand-written work.
  const [hand, adapted, adapterRounds] = await compare('koa-hand', 'koa-adapter');
  printTable('The adapter alone on Koa: payRouter and the Node bridge around the hand-written work instead of the core', [
    { name: 'koa hand-written', unit: 'req/s', value: hand },
    { name: 'koa payRouter over the hand-written work', unit: 'req/s', value: adapted, reference: 'koa hand-written', rounds: adapterRounds },
  ]);
}

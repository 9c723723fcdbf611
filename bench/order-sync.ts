/**
 * Order sync: `pay.orders.sync()` against a naive sequential page loop (same page size, plain fetch +
 * JSON.parse, no prefetch, no validation), syncing 100,000 sandbox orders with a few milliseconds of
 * latency added to every page, then 20,000 orders with a latency closer to a real platform's page; and
 * the peak memory of the sync at 10,000, 100,000 and 300,000 orders.
 *
 * The sandbox runs in a child process (so its CPU is not the client's), and each memory figure comes
 * from a fresh child process that does nothing but the sync; with --expose-gc, also the heap the sync keeps. Children run this file compiled to plain
 * JavaScript (esbuild, which tsup and tsx already bring), so the tsx loader's ~35 MB is not counted.
 * BENCH_SAMPLES=1 prints every run behind the medians.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { getHeapSpaceStatistics } from 'node:v8';
import { fileURLToPath } from 'node:url';
import { createOrders } from '../src/core/commerce/index.js';
import { resolveCommerceConfig } from '../src/core/config.js';
import { startSandbox } from '../src/sandbox/index.js';
import { printTable } from './lib.js';

const ORDERS = 100_000;
const PAGE_SIZE = 100;
const LATENCY_MS = 5;
const ROLE = 'PAYWIDGET_BENCH_ORDER_SYNC_ROLE';
const silent = { debug() {}, info() {}, warn() {}, error() {} };

interface Platform {
  url: string;
  username: string;
  password: string;
}

let compiled: Promise<string> | undefined;

/** This file bundled to node_modules/.cache (bare imports still resolve from node_modules). */
function compiledSelf(): Promise<string> {
  compiled ??= (async () => {
    const { build } = await import('esbuild');
    const outfile = fileURLToPath(new URL('../node_modules/.cache/paywidget-bench/order-sync.mjs', import.meta.url));
    await build({ entryPoints: [fileURLToPath(import.meta.url)], outfile, bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', logLevel: 'silent' });
    return outfile;
  })();
  return compiled;
}

/** A child process: the sandbox (role 'sandbox') or one measured sync (role 'sync'). */
async function child(role: string, env: Record<string, string>, nodeFlags: string[] = []): Promise<ChildProcess> {
  return spawn(process.execPath, [...nodeFlags, await compiledSelf()], {
    env: { ...process.env, ...env, [ROLE]: role },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
}

/** The lines a child prints, one at a time. */
function lineReader(proc: ChildProcess): () => Promise<string> {
  const lines = createInterface({ input: proc.stdout! })[Symbol.asyncIterator]();
  return async () => {
    const next = await lines.next();
    if (next.done) throw new Error('the benchmark child process ended without an answer');
    return next.value;
  };
}

interface RunningPlatform {
  platform: Platform;
  /** CPU time (user + system, ms) the sandbox process has used so far. */
  cpuMs: () => Promise<number>;
  stop: () => void;
}

async function startPlatform(orders: number, latencyMs: number): Promise<RunningPlatform> {
  const proc = await child('sandbox', { ORDERS: String(orders), LATENCY_MS: String(latencyMs) });
  const nextLine = lineReader(proc);
  const platform = JSON.parse(await nextLine()) as Platform;
  const cpuMs = async () => {
    proc.stdin!.write('cpu\n');
    return Number(await nextLine());
  };
  return { platform, cpuMs, stop: () => proc.stdin!.end() };
}

/** What a merchant might write first: one page after another (all of them, or the first `maxPages`). */
async function naiveSync(p: Platform, maxPages = Infinity): Promise<number> {
  const tokenResponse = await fetch(`${p.url}/rest/default/V1/integration/admin/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: p.username, password: p.password }),
  });
  const token = (await tokenResponse.json()) as string;
  let count = 0;
  for (let page = 1; ; page++) {
    const query = `searchCriteria[sortOrders][0][field]=entity_id&searchCriteria[sortOrders][0][direction]=ASC&searchCriteria[pageSize]=${PAGE_SIZE}&searchCriteria[currentPage]=${page}`;
    const response = await fetch(`${p.url}/rest/default/V1/orders?${query}`, { headers: { authorization: `Bearer ${token}` } });
    const result = JSON.parse(await response.text()) as { items: unknown[]; total_count: number };
    count += result.items.length;
    if (result.items.length < PAGE_SIZE || page * PAGE_SIZE >= result.total_count || page >= maxPages) return count;
  }
}

function orders(p: Platform) {
  const { commerce, http } = resolveCommerceConfig({ commerce: { url: p.url, username: p.username, password: p.password }, env: {} });
  return createOrders(commerce!, { http, logger: silent });
}

async function librarySync(p: Platform, checkpoint: string, onPages: (pages: number) => void = () => {}): Promise<number> {
  const summary = await orders(p).sync({ checkpoint, pageSize: PAGE_SIZE, onOrder: () => {} });
  onPages(summary.pages);
  return summary.delivered;
}

/** A few thousand orders through both code paths first, so neither is measured cold. */
async function warmUp(p: Platform): Promise<void> {
  await naiveSync(p, 30);
  let n = 0;
  for await (const _order of orders(p).iterate({ pageSize: PAGE_SIZE })) if (++n >= 3_000) break;
}

async function timed(fn: () => Promise<number>, expected: number): Promise<number> {
  const start = performance.now();
  const count = await fn();
  const seconds = (performance.now() - start) / 1000;
  if (count !== expected) throw new Error(`synced ${count} orders, expected ${expected}`);
  return expected / seconds;
}

interface Memory {
  rss: number;
  heap: number;
  buffers: number;
  before: number;
  /** Run with --expose-gc: the most heap left after a full collection, every 50 pages (what the sync keeps). */
  kept: number;
  /** Orders per second of that run (no added latency). */
  rate: number;
  /** The young generation's largest size in the run (MB): V8 grows it under a steady allocation rate, up to a maximum each Node version sets. */
  young: number;
}

/** Peak RSS, heap and ArrayBuffers (MB) of a fresh process syncing `count` orders, and its RSS before. */
async function peakMemory(count: number, nodeFlags: string[] = []): Promise<Memory> {
  const { platform, stop } = await startPlatform(count, 0);
  try {
    const proc = await child('sync', { PLATFORM: JSON.stringify(platform), EXPECTED: String(count) }, nodeFlags);
    return JSON.parse(await lineReader(proc)()) as Memory;
  } finally {
    stop();
  }
}

/**
 * Orders per second of the naive loop and of the library on one sandbox with `latencyMs` per page:
 * the median of `rounds` runs each, alternating which goes first, so a busy moment on a 2-core machine
 * does not fall on one side only. Also the CPU per page of the sandbox and of the library (this
 * process) during the library's runs: each is one thread on one of the machine's cores, so the sync
 * cannot take pages faster than the slower of the two works through them.
 */
async function compare(count: number, latencyMs: number, rounds: number): Promise<{ naive: number; library: number; sandboxMsPerPage: number; clientMsPerPage: number }> {
  const { platform, cpuMs, stop } = await startPlatform(count, latencyMs);
  try {
    await warmUp(platform);
    const naive: number[] = [];
    const library: number[] = [];
    let sandboxMs = 0;
    let clientMs = 0;
    let pages = 0;
    for (let round = 0; round < rounds; round++) {
      const runNaive = async () => naive.push(await timed(() => naiveSync(platform), count));
      const runLibrary = async () => {
        const before = await cpuMs();
        const ownBefore = process.cpuUsage();
        library.push(await timed(() => librarySync(platform, `measured-${latencyMs}-${round}`, (n) => (pages += n)), count));
        const own = process.cpuUsage(ownBefore);
        clientMs += (own.user + own.system) / 1000;
        sandboxMs += (await cpuMs()) - before;
      };
      if (round % 2 === 0) await runNaive().then(runLibrary);
      else await runLibrary().then(runNaive);
    }
    if (process.env.BENCH_SAMPLES) console.error({ latencyMs, naive, library });
    const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    return { naive: median(naive), library: median(library), sandboxMsPerPage: sandboxMs / pages, clientMsPerPage: clientMs / pages };
  } finally {
    stop();
  }
}

const load = () => loadavg()[0]!.toFixed(1);

export async function benchOrderSync(): Promise<void> {
  const loadBefore = load();
  const required = await compare(ORDERS, LATENCY_MS, 3);
  const slow = await compare(20_000, 25, 3);
  const small = await peakMemory(10_000);
  const large = await peakMemory(100_000);
  // A third point: where the peak stops growing, the sync's memory is bounded, whatever the count.
  const huge = await peakMemory(300_000);
  // The growth from 10k to 100k is V8 sizing its heap as a run goes on, not the sync keeping more (see the heap
  // kept below): its young generation grows (Node 20 up to 2 × 16 MB, Node 24 up to 2 × 64 MB), which the cap
  // stops, and so does the old generation's limit, which it does not.
  const cappedFlags = ['--max-semi-space-size=4'];
  const smallCapped = await peakMemory(10_000, cappedFlags);
  const largeCapped = await peakMemory(100_000, cappedFlags);
  // What the sync keeps, as opposed to garbage not yet collected: the heap after a full collection.
  const [keptSmall, keptLarge, keptHuge] = [await peakMemory(10_000, ['--expose-gc']), await peakMemory(100_000, ['--expose-gc']), await peakMemory(300_000, ['--expose-gc'])];
  const context = `load average ${loadBefore} → ${load()} on ${availableParallelism()} cores`;
  printTable(`Order sync, page size ${PAGE_SIZE}, median of 3 alternating runs (${context})`, [
    { name: `naive loop, ${ORDERS / 1000}k orders, +${LATENCY_MS} ms/page`, unit: 'orders/s', value: required.naive },
    { name: `pay.orders.sync, ${ORDERS / 1000}k orders, +${LATENCY_MS} ms/page`, unit: 'orders/s', value: required.library, reference: `naive loop, ${ORDERS / 1000}k orders, +${LATENCY_MS} ms/page`, target: '≥ 3×' },
    // Where the ratio stops on this machine: the sandbox and the sync each take a page's worth of CPU on
    // their own thread (mostly JSON: stringify there, parse here), while the naive loop waits for both
    // plus the latency on every page.
    { name: `bound: one page per ${required.sandboxMsPerPage.toFixed(2)} ms of sandbox CPU`, unit: 'orders/s', value: (PAGE_SIZE * 1000) / required.sandboxMsPerPage, reference: `naive loop, ${ORDERS / 1000}k orders, +${LATENCY_MS} ms/page` },
    { name: `bound: one page per ${required.clientMsPerPage.toFixed(2)} ms of the sync's CPU`, unit: 'orders/s', value: (PAGE_SIZE * 1000) / required.clientMsPerPage, reference: `naive loop, ${ORDERS / 1000}k orders, +${LATENCY_MS} ms/page` },
    { name: 'naive loop, 20k orders, +25 ms/page', unit: 'orders/s', value: slow.naive },
    { name: 'pay.orders.sync, 20k orders, +25 ms/page', unit: 'orders/s', value: slow.library, reference: 'naive loop, 20k orders, +25 ms/page' },
  ]);
  printTable(`Order sync, peak memory of a process that only syncs (compiled, no tsx; Node ${process.versions.node}, whose V8 grew the young generation to ${large.young} MB in the 100,000-order run)`, [
    { name: 'RSS before the sync', unit: 'MB', value: small.before },
    { name: 'peak RSS, 10,000 orders', unit: 'MB', value: small.rss },
    { name: 'peak RSS, 100,000 orders', unit: 'MB', value: large.rss, reference: 'peak RSS, 10,000 orders', target: 'flat, < 150 MB' },
    { name: 'peak RSS, 300,000 orders', unit: 'MB', value: huge.rss, reference: 'peak RSS, 100,000 orders', target: 'flat, < 150 MB' },
    { name: 'peak heap used, 10,000 orders', unit: 'MB', value: small.heap },
    { name: 'peak heap used, 100,000 orders', unit: 'MB', value: large.heap, reference: 'peak heap used, 10,000 orders', target: 'flat' },
    { name: 'peak heap used, 300,000 orders', unit: 'MB', value: huge.heap, reference: 'peak heap used, 100,000 orders', target: 'flat' },
    { name: 'peak ArrayBuffers, 100,000 orders', unit: 'MB', value: large.buffers },
    { name: 'heap kept (after a full GC every 50 pages), 10,000 orders', unit: 'MB', value: keptSmall.kept },
    { name: 'heap kept (after a full GC every 50 pages), 100,000 orders', unit: 'MB', value: keptLarge.kept, reference: 'heap kept (after a full GC every 50 pages), 10,000 orders', target: 'flat' },
    { name: 'heap kept (after a full GC every 50 pages), 300,000 orders', unit: 'MB', value: keptHuge.kept, reference: 'heap kept (after a full GC every 50 pages), 100,000 orders', target: 'flat' },
    { name: 'peak RSS, 10,000 orders, --max-semi-space-size=4', unit: 'MB', value: smallCapped.rss },
    { name: 'peak RSS, 100,000 orders, --max-semi-space-size=4', unit: 'MB', value: largeCapped.rss, reference: 'peak RSS, 10,000 orders, --max-semi-space-size=4', target: 'flat' },
    { name: 'sync speed in the 100,000-order run, no added latency', unit: 'orders/s', value: large.rate },
    { name: 'the same, --max-semi-space-size=4', unit: 'orders/s', value: largeCapped.rate, reference: 'sync speed in the 100,000-order run, no added latency' },
  ]);
}

async function runSandboxChild(): Promise<void> {
  const sb = await startSandbox({ commerce: { orders: Number(process.env.ORDERS) } });
  const latencyMs = Number(process.env.LATENCY_MS);
  if (latencyMs > 0) sb.commerce.faults.inject({ route: '/rest/default/V1/orders', latencyMs, times: Infinity });
  process.stdout.write(`${JSON.stringify({ url: sb.commerceUrl, username: sb.commerceUsername, password: sb.commercePassword })}\n`);
  // 'cpu' on stdin: answer the CPU time used so far (ms); the end of stdin: stop.
  const commands = createInterface({ input: process.stdin });
  commands.on('line', () => {
    const { user, system } = process.cpuUsage();
    process.stdout.write(`${(user + system) / 1000}\n`);
  });
  commands.on('close', () => void sb.close().then(() => process.exit(0)));
}

async function runSyncChild(): Promise<void> {
  const platform = JSON.parse(process.env.PLATFORM!) as Platform;
  let rss = 0;
  let heap = 0;
  let buffers = 0;
  let kept = 0;
  let pages = 0;
  const gc = (globalThis as { gc?: () => void }).gc;
  let young = 0;
  const sample = () => {
    const m = process.memoryUsage();
    rss = Math.max(rss, m.rss);
    heap = Math.max(heap, m.heapUsed);
    buffers = Math.max(buffers, m.arrayBuffers);
  };
  const sampleYoung = () => {
    for (const space of getHeapSpaceStatistics()) if (space.space_name === 'new_space') young = Math.max(young, space.space_size);
  };
  const before = process.memoryUsage().rss;
  const start = performance.now();
  const timer = setInterval(sample, 20);
  const prefetch = Number(process.env.PREFETCH) || undefined;
  const onProgress = () => {
    sample();
    sampleYoung();
    if (gc !== undefined && ++pages % 50 === 0) {
      gc();
      kept = Math.max(kept, process.memoryUsage().heapUsed);
    }
  };
  const delivered = await orders(platform).sync({ checkpoint: 'memory', pageSize: PAGE_SIZE, prefetch, onOrder: () => {}, onProgress }).then((s) => s.delivered);
  const rate = delivered / ((performance.now() - start) / 1000);
  clearInterval(timer);
  sample();
  if (delivered !== Number(process.env.EXPECTED)) throw new Error(`synced ${delivered} orders, expected ${process.env.EXPECTED}`);
  // The kernel's high-water mark (KiB): exact, where sampling could miss a short peak.
  rss = Math.max(rss, process.resourceUsage().maxRSS * 1024);
  const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;
  process.stdout.write(`${JSON.stringify({ rss: mb(rss), heap: mb(heap), buffers: mb(buffers), before: mb(before), kept: mb(kept), rate: Math.round(rate), young: mb(young) })}\n`);
}

/** Run as a script, not imported by bench/run.ts; real paths, since import.meta.url has symlinks resolved and argv does not. */
const isMain = process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
if (isMain) {
  const role = process.env[ROLE];
  await (role === 'sandbox' ? runSandboxChild() : role === 'sync' ? runSyncChild() : benchOrderSync());
}

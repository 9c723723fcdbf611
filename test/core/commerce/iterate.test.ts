import { afterEach, describe, expect, it } from 'vitest';
import type { Sandbox } from 'paywidget-server/sandbox';
import type { IncomingMessage } from 'node:http';
import { captureLogger } from '../../helpers/capture-logger.js';
import { startLocalServer } from '../../helpers/local-server.js';
import { MAX_RESPONSE_BYTES } from '../../../src/core/transport/limit.js';
import { collect, commerceSandbox, payFor, range } from './helpers.js';

let sb: Sandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

async function text(req: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of req) body += String(chunk);
  return body;
}

const idsOf = (orders: Array<{ entity_id: number }>) => orders.map((o) => o.entity_id);

/** The text of a first page of 10 (as the iteration asks for it): these orders' JSON, any other members, the total. */
const firstPageOf = (orders: string[], totalCount: number, more = '') => `{"items":[${orders.join(',')}]${more},"total_count":${totalCount},"search_criteria":{"filter_groups":[],"page_size":10,"current_page":1}}`;

describe('orders.iterate', () => {
  it('yields every matching order once, entity_id ascending, across pages', async () => {
    sb = await commerceSandbox({ orders: 730 });
    const pay = payFor(sb);
    expect(idsOf(await collect(pay.orders.iterate({ pageSize: 100 })))).toEqual(range(1, 730));
    const pending = range(1, 730).filter((id) => sb!.commerce.order(id)!.status === 'pending');
    sb.commerce.resetStats();
    expect(idsOf(await collect(pay.orders.iterate({ status: 'pending', pageSize: 50 })))).toEqual(pending);
    // Requests ahead start at guessed entity_ids: with matches spread unevenly, a few more than one per page.
    expect(sb.commerce.stats().searches).toBeGreaterThanOrEqual(Math.ceil(pending.length / 50));
    expect(sb.commerce.stats().searches).toBeLessThanOrEqual(Math.ceil(pending.length / 50) + 3);
  });

  it('crosses a long stretch of ids without a match in a few requests, not one guessed key after another', async () => {
    sb = await commerceSandbox({ orders: 5_000 });
    const pay = payFor(sb);
    // Old and new orders on hold, none between: requests ahead are spaced as the old ones were, 100 ids apart.
    const held = [...range(1, 300), ...range(4_701, 5_000)];
    for (const id of held) sb.commerce.setOrder(id, { status: 'holded' });
    for (const prefetch of [1, 6]) {
      sb.commerce.resetStats();
      expect(idsOf(await collect(pay.orders.iterate({ status: 'holded', pageSize: 100, prefetch })))).toEqual(held);
      // 6 pages, and the requests ahead already sent into the stretch: not one for every 100 ids of it (about 50).
      expect(sb.commerce.stats().searches).toBeLessThanOrEqual(6 + prefetch + 1);
    }
  });

  it('skips no order when orders already read leave the filter during the run', async () => {
    sb = await commerceSandbox({ orders: 400 });
    const pay = payFor(sb);
    const pending = range(1, 400).filter((id) => sb!.commerce.order(id)!.status === 'pending');
    const seen: number[] = [];
    for await (const order of pay.orders.iterate({ status: 'pending', pageSize: 10, prefetch: 1 })) {
      seen.push(order.entity_id);
      // Each order delivered is paid at once, as shoppers pay while a sync runs: with offset pages,
      // every later order would move up a place and the first of each next page would be skipped.
      sb.commerce.setOrder(order.entity_id, { state: 'processing', status: 'processing' });
    }
    expect(seen).toEqual(pending);
  });

  it('stops on total_count when the platform answers the last page again past the end', async () => {
    sb = await commerceSandbox({ orders: 300, lastPageAgain: true });
    const pay = payFor(sb);
    for (const pageSize of [100, 70]) {
      sb.commerce.resetStats();
      expect(idsOf(await collect(pay.orders.iterate({ pageSize })))).toEqual(range(1, 300));
      expect(sb.commerce.stats().searches).toBe(Math.ceil(300 / pageSize));
    }
  });

  it('drops a repeated last page when the total grows under it (no order twice)', async () => {
    sb = await commerceSandbox({ orders: 200, lastPageAgain: true });
    const pay = payFor(sb);
    const seen: number[] = [];
    for await (const order of pay.orders.iterate({ pageSize: 50, prefetch: 1 })) {
      seen.push(order.entity_id);
      // Orders created while iterating raise total_count; pages past the old end repeat the last page.
      if (order.entity_id === 120) for (let i = 0; i < 5; i++) sb.commerce.addOrder();
    }
    expect(seen).toEqual(range(1, 205));
  });

  it('learns a page-size cap from the 400 and pages with it', async () => {
    sb = await commerceSandbox({ orders: 260, maxPageSize: 40 });
    const pay = payFor(sb);
    expect(idsOf(await collect(pay.orders.iterate({ pageSize: 100 })))).toEqual(range(1, 260));
    // 1 refused request, then 7 pages of 40; the cap is remembered for the next run.
    expect(sb.commerce.stats().searches).toBe(8);
    sb.commerce.resetStats();
    await collect(pay.orders.iterate({ pageSize: 100 }));
    expect(sb.commerce.stats().searches).toBe(7);
  });

  it('reads on past a short page while total_count says more are left (a page-size cap without a word)', async () => {
    sb = await commerceSandbox({ orders: 300, silentPageSizeCap: 50 });
    const logger = captureLogger();
    const pay = payFor(sb, { logger });
    for (const prefetch of [1, 6]) {
      expect(idsOf(await collect(pay.orders.iterate({ pageSize: 100, prefetch })))).toEqual(range(1, 300));
    }
    expect(logger.text()).toMatch(/answered 50 orders where 100 were asked.*paging with 50/);
    // Reads with the cap it learned: 6 pages of 50, one more to find the end, at most.
    sb.commerce.resetStats();
    expect(idsOf(await collect(pay.orders.iterate({ pageSize: 100 })))).toEqual(range(1, 300));
    expect(sb.commerce.stats().searches).toBeLessThanOrEqual(7);
  });

  it('keeps its page size after one short answer whose total_count raced an order placed meanwhile', async () => {
    sb = await commerceSandbox({ orders: 301 });
    // Magento counts in a query of its own: an order placed between the page and the count makes the total one more.
    let raced = false;
    const proxy = await startLocalServer((req, res) => {
      void (async () => {
        const upstream = await fetch(`${sb!.commerceUrl}${req.url}`, { method: req.method ?? 'GET', headers: { authorization: req.headers.authorization ?? '', 'content-type': 'application/json' }, body: req.method === 'POST' ? await text(req) : null });
        let body = await upstream.text();
        const answer = JSON.parse(body) as { items?: unknown[]; total_count?: number; search_criteria?: { page_size?: number } };
        if (!raced && answer.items && answer.items.length > 0 && answer.items.length < (answer.search_criteria?.page_size ?? Infinity)) {
          raced = true;
          answer.total_count! += 1;
          body = JSON.stringify(answer);
        }
        res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(body);
      })();
    });
    try {
      const pay = payFor(sb, { commerce: { url: proxy.base } });
      expect(idsOf(await collect(pay.orders.iterate({ pageSize: 100, prefetch: 1 })))).toEqual(range(1, 301));
      expect(raced).toBe(true);
      sb.commerce.resetStats();
      expect(idsOf(await collect(pay.orders.iterate({ pageSize: 100, prefetch: 1 })))).toEqual(range(1, 301));
      expect(sb.commerce.stats().searches).toBe(4);
    } finally {
      await proxy.close();
    }
  });

  it('refuses a page past the most an answer may hold, saying to ask for fewer orders a page', async () => {
    sb = await commerceSandbox({ orders: 10 });
    // The login goes through; every search declares more than 64 MiB (a page of large orders, many a page).
    const proxy = await startLocalServer((req, res) => {
      void (async () => {
        if (req.url!.includes('/V1/orders')) return void res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(MAX_RESPONSE_BYTES + 1) }).end();
        const upstream = await fetch(`${sb!.commerceUrl}${req.url}`, { method: req.method ?? 'GET', headers: { 'content-type': 'application/json' }, body: req.method === 'POST' ? await text(req) : null });
        res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(await upstream.text());
      })();
    });
    try {
      const pay = payFor(sb, { commerce: { url: proxy.base } });
      for (const reading of [pay.orders.search({ pageSize: 250 }), collect(pay.orders.iterate({ pageSize: 250 }))]) {
        await expect(reading).rejects.toMatchObject({ code: 'UPSTREAM_INVALID_RESPONSE', message: expect.stringMatching(/longer than 64 MiB.* Ask for fewer orders a page: pageSize \(the CLI's --page-size\) is 250\.$/) });
      }
    } finally {
      await proxy.close();
    }
  });

  it('fetches a bounded number of pages at once', async () => {
    sb = await commerceSandbox({ orders: 500 });
    sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders', latencyMs: 15, times: Infinity });
    const pay = payFor(sb);
    await pay.orders.get(1); // the token first, so only searches overlap
    sb.commerce.resetStats();
    expect(idsOf(await collect(pay.orders.iterate({ pageSize: 20, prefetch: 3 })))).toHaveLength(500);
    expect(sb.commerce.stats().maxConcurrentRequests).toBe(3);
    sb.commerce.resetStats();
    await collect(pay.orders.iterate({ pageSize: 20, prefetch: 1 }));
    expect(sb.commerce.stats().maxConcurrentRequests).toBe(1);
  });

  it('keeps 16 pages in flight, the most it allows, without Node warning of a listener leak', async () => {
    sb = await commerceSandbox({ orders: 600 });
    sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders', latencyMs: 15, times: Infinity });
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    try {
      const pay = payFor(sb);
      expect(idsOf(await collect(pay.orders.iterate({ pageSize: 20, prefetch: 16 })))).toHaveLength(600);
      expect(idsOf(await collect(pay.orders.iterate({ pageSize: 20, prefetch: 16, signal: new AbortController().signal })))).toHaveLength(600);
      expect(sb.commerce.stats().maxConcurrentRequests).toBe(16);
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).toEqual([]);
  });

  it('keeps its requests ahead on the matches when the filter starts far past the cursor', async () => {
    sb = await commerceSandbox({ orders: 3000 });
    const pay = payFor(sb);
    const from = sb.commerce.order(2001)!.created_at as string;
    const expected = range(1, 3000).filter((id) => (sb!.commerce.order(id)!.created_at as string) >= from);
    const pages = Math.ceil(expected.length / 50);
    await pay.orders.get(1); // the token first, so only searches are counted and overlap
    sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders', latencyMs: 15, times: Infinity });
    sb.commerce.resetStats();
    const seen: number[] = [];
    let searches = 0;
    for await (const order of pay.orders.iterate({ createdFrom: from, pageSize: 50, prefetch: 4 })) {
      seen.push(order.entity_id);
      if (seen.length === 200) {
        // Past the first burst: from here on, requests ahead overlap only if they were spaced right.
        searches = sb.commerce.stats().searches;
        sb.commerce.resetStats();
      }
    }
    expect(seen).toEqual(expected);
    // Spaced from entity_id 0, the requests ahead all land past the last order (one wasted request
    // each), and the pages between are then read one at a time.
    expect(searches + sb.commerce.stats().searches).toBeLessThanOrEqual(pages + 1);
    expect(sb.commerce.stats().maxConcurrentRequests).toBeGreaterThan(1);
  });

  it('retries a 5xx on one page and loses nothing', async () => {
    sb = await commerceSandbox({ orders: 250 });
    const pay = payFor(sb);
    await pay.orders.get(1);
    sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders', status: 503, times: 2 });
    expect(idsOf(await collect(pay.orders.iterate({ pageSize: 50 })))).toEqual(range(1, 250));
  });

  it('stops fetching when the consumer stops early', async () => {
    sb = await commerceSandbox({ orders: 1000 });
    const pay = payFor(sb);
    const first: number[] = [];
    for await (const order of pay.orders.iterate({ pageSize: 10, prefetch: 4 })) {
      first.push(order.entity_id);
      if (first.length === 25) break;
    }
    expect(first).toEqual(range(1, 25));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(sb.commerce.stats().searches).toBeLessThanOrEqual(7);
  });

  it('refuses a page the platform did not sort (it would skip orders)', async () => {
    sb = await commerceSandbox({ orders: 5 });
    const [a, b] = [sb.commerce.order(1), sb.commerce.order(2)];
    sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders', status: 200, body: JSON.stringify({ items: [b, a], total_count: 2, search_criteria: { filter_groups: [], page_size: 10, current_page: 1 } }) });
    await expect(collect(payFor(sb).orders.iterate({ pageSize: 10 }))).rejects.toMatchObject({ code: 'UPSTREAM_INVALID_RESPONSE', message: expect.stringContaining('not sorted by entity_id') });
  });

  it('resumes after a given entity_id', async () => {
    sb = await commerceSandbox({ orders: 120 });
    expect(idsOf(await collect(payFor(sb).orders.iterate({ afterEntityId: 95, pageSize: 10 })))).toEqual(range(96, 120));
  });

  it('ends at the next order once its signal aborts, with the abort reason, though pages were fetched ahead', async () => {
    sb = await commerceSandbox({ orders: 1_000 });
    sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders', latencyMs: 20, times: Infinity });
    const controller = new AbortController();
    const seen: number[] = [];
    const loop = async () => {
      for await (const order of payFor(sb!).orders.iterate({ pageSize: 50, signal: controller.signal })) {
        seen.push(order.entity_id);
        if (seen.length === 120) controller.abort();
      }
    };
    await expect(loop()).rejects.toMatchObject({ name: 'AbortError' });
    expect(seen).toEqual(range(1, 120));
  });

  it('names the order a page cannot be used for, and how to get past it', async () => {
    sb = await commerceSandbox({ orders: 300 });
    sb.commerce.setOrder(157, { grand_total: '19.99' as never });
    const error = await collect(payFor(sb).orders.iterate({ pageSize: 100 })).then(() => undefined, (e: unknown) => e as Error & { code: string });
    expect(error?.code).toBe('UPSTREAM_INVALID_RESPONSE');
    expect(error?.message).toMatch(/items\[56\] \(entity_id 157\)\.grand_total: .*Fix that order on the platform: every search, iteration or sync stops at it until then/);
    expect(error?.message).not.toContain('leave it out with a filter'); // status and dates cannot single out one order
  });

  it('hands over the orders before one that is not JSON, then stops with the error a search of that page gives', async () => {
    sb = await commerceSandbox({ orders: 4 });
    const orders = [1, 2, 3, 4].map((id) => JSON.stringify(sb!.commerce.order(id)));
    orders[2] = orders[2]!.replace('{', '{"note":01,'); // a leading zero: not JSON
    const body = firstPageOf(orders, 4);
    sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders', status: 200, body, times: 2 });
    const pay = payFor(sb);
    const seen: number[] = [];
    const error = await (async () => {
      for await (const order of pay.orders.iterate({ pageSize: 10 })) seen.push(order.entity_id);
    })().then(() => undefined, (e: unknown) => e);
    expect(seen).toEqual([1, 2]);
    const searched = await pay.orders.search({ pageSize: 10 }).then(() => undefined, (e: unknown) => e);
    expect(error).toMatchObject({ code: 'UPSTREAM_INVALID_RESPONSE', message: expect.stringContaining('not JSON') });
    expect((error as Error).message).toBe((searched as Error).message);
  });

  it('refuses an order whose entity_id is written twice, the last time with an escape (it would not be the id paged by)', async () => {
    sb = await commerceSandbox({ orders: 2 });
    const first = JSON.stringify(sb.commerce.order(1)).replace(/}$/, ',"entity\\u005fid":9}');
    const body = firstPageOf([first, JSON.stringify(sb.commerce.order(2))], 2);
    expect((JSON.parse(body) as { items: Array<{ entity_id: number }> }).items[0]!.entity_id).toBe(9); // JSON.parse keeps the last
    sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders', status: 200, body });
    await expect(collect(payFor(sb).orders.iterate({ pageSize: 10 }))).rejects.toMatchObject({ code: 'UPSTREAM_INVALID_RESPONSE', message: expect.stringContaining('entity_id is written twice (1 and 9)') });
  });

  it('reads the orders JSON.parse reads when `items` is written twice, the last time with an escape', async () => {
    sb = await commerceSandbox({ orders: 2 });
    const [first, second] = [1, 2].map((id) => JSON.stringify(sb!.commerce.order(id)));
    const body = firstPageOf([first!], 1, `,"item\\u0073":[${second}]`);
    sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders', status: 200, body, times: 2 });
    const pay = payFor(sb);
    const searched = await pay.orders.search({ pageSize: 10 });
    expect(idsOf(searched.items)).toEqual([2]);
    expect(idsOf(await collect(pay.orders.iterate({ pageSize: 10 })))).toEqual([2]);
  });

  it('hands over the orders before one it cannot use, then stops with its error', async () => {
    sb = await commerceSandbox({ orders: 300 });
    sb.commerce.setOrder(157, { grand_total: '19.99' as never });
    sb.commerce.setOrder(30, { grand_total: '1.00' as never });
    for (const prefetch of [1, 6]) {
      for (const [from, bad] of [[0, 30], [30, 157]] as const) {
        const seen: number[] = [];
        const error = await (async () => {
          for await (const order of payFor(sb!).orders.iterate({ pageSize: 100, prefetch, afterEntityId: from })) seen.push(order.entity_id);
        })().then(() => undefined, (e: unknown) => e as Error & { code: string });
        expect(error?.code).toBe('UPSTREAM_INVALID_RESPONSE');
        expect(error?.message).toContain(`entity_id ${bad}`);
        expect(seen).toEqual(range(from + 1, bad - 1));
      }
    }
  });
});

import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CommerceError, createPay } from 'paywidget-server';
import type { Sandbox } from 'paywidget-server/sandbox';
import { formatMagentoMessage } from '../../../src/core/commerce/errors.js';
import { commerceSandbox, payFor, range, rejection } from './helpers.js';

let sb: Sandbox;
beforeAll(async () => {
  sb = await commerceSandbox({ orders: 400, seed: 3 });
});
afterAll(() => sb.close());
afterEach(() => sb.commerce.faults.clear());

describe('orders.get', () => {
  it('reads one order by entity_id (number or digit string)', async () => {
    const pay = payFor(sb);
    const order = await pay.orders.get(12);
    expect(order).toEqual(sb.commerce.order(12));
    expect((await pay.orders.get('12')).increment_id).toBe('000000012');
  });

  it('refuses a zero-padded id, which is an increment_id: read as an entity_id it names another order', async () => {
    const error = await rejection(payFor(sb).orders.get('000000012'));
    expect(error).toMatchObject({ code: 'INVALID_INPUT', status: 400 });
    expect(error.message).toContain('leading zero, as an increment_id has');
    expect(error.message).toContain("orders.search({ incrementId: '000000012' })");
  });

  it('refuses an answer that is another order than the one asked for', async () => {
    sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders/:id', status: 200, body: JSON.stringify(sb.commerce.order(13)) });
    const error = await rejection(payFor(sb).orders.get(12));
    expect(error).toMatchObject({ code: 'UPSTREAM_INVALID_RESPONSE', status: 502 });
    expect(error.message).toContain('answered the read of order 12 with order 13');
  });

  it('answers a missing order with ORDER_NOT_FOUND (404), keeping the Magento body', async () => {
    const error = await rejection(payFor(sb).orders.get(99_999));
    expect(error).toBeInstanceOf(CommerceError);
    expect(error).toMatchObject({ code: 'ORDER_NOT_FOUND', status: 404, upstreamStatus: 404 });
    expect(error.message).toContain('Order 99999 was not found');
    expect((error as CommerceError).body?.message).toBe("The entity that was requested doesn't exist. Verify the entity and try again.");
  });

  it('does not take a 404 without Magento\'s body for a missing order (a wrong URL)', async () => {
    sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders/:id', status: 404, body: '<html>Not Found</html>' });
    const error = await rejection(payFor(sb).orders.get(1));
    expect(error.code).toBe('COMMERCE_ERROR');
    expect(error.message).toContain('check COMMERCE_URL');
  });

  it('on a redirect, names the base URL to set when the API moved, and what may stand in front when it points elsewhere', async () => {
    sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders/:id', status: 301, headers: { Location: 'https://shop.example/magento/rest/default/V1/orders/1' } });
    const moved = await rejection(payFor(sb).orders.get(1));
    expect(moved.message).toMatch(/redirect \(HTTP 301\) to https:\/\/shop\.example\/magento\/rest\/default\/V1\/orders\/1\. .*set COMMERCE_URL \(commerce\.url\) to https:\/\/shop\.example\/magento\.$/);
    sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders/:id', status: 302, headers: { Location: '/admin/login' } });
    const login = await rejection(payFor(sb).orders.get(1));
    expect(login.message).toMatch(/it does not point to this API's paths \(\/rest\/…\): a proxy, a login page .*Set COMMERCE_URL \(commerce\.url\) to the service's own base URL\.$/);
  });

  it('does not take older Magento\'s "store not found" 404 for a missing order: it names COMMERCE_SCOPE', async () => {
    sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders/:id', status: 404, body: JSON.stringify({ message: "The store that was requested wasn't found. Verify the store and try again." }) });
    const error = await rejection(payFor(sb).orders.get(1));
    expect(error.code).toBe('COMMERCE_ERROR');
    expect(error.message).toContain('check COMMERCE_SCOPE');
  });

  it('does not take Magento\'s "no route" 404 for a missing order: the path or read method is wrong', async () => {
    // What stock Magento answers a POST read (readMethod: 'POST' where only GET is routed), or a proxy that routes only part of /V1.
    sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders/:id', status: 404, body: '{"message":"Request does not match any route."}', times: 2 });
    const error = await rejection(payFor(sb).orders.get(1));
    expect(error).toMatchObject({ code: 'COMMERCE_ERROR', upstreamStatus: 404 });
    expect(error.message).toContain('Request does not match any route; the platform has no such path for this method: check COMMERCE_URL (commerce.url) and commerce.readMethod.');
    const minted = await payFor(sb).handle({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json' }, rawBody: '{"order_id":1}' });
    expect(minted!.status).not.toBe(404);
    expect(JSON.parse(String(minted!.body)).error.code).toBe('COMMERCE_ERROR');
  });

  it.each([0, -1, 1.5, 'abc', '', '12a'])('refuses the id %j with INVALID_INPUT', async (id) => {
    const error = await rejection(payFor(sb).orders.get(id as number));
    expect(error.code).toBe('INVALID_INPUT');
  });

  it('retries a 5xx and reads on', async () => {
    sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders/:id', status: 503 });
    expect((await payFor(sb).orders.get(3)).entity_id).toBe(3);
  });

  it('reads with POST when readMethod is POST (and GET by default)', async () => {
    sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders/:id', status: 405, times: Infinity, body: '{"message":"GET refused"}' });
    sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders', status: 405, times: Infinity, body: '{"message":"GET refused"}' });
    const post = payFor(sb, { commerce: { readMethod: 'POST' } });
    expect((await post.orders.get(5)).entity_id).toBe(5);
    expect((await post.orders.search({ status: 'pending', pageSize: 3 })).items).toHaveLength(3);
    expect((await rejection(payFor(sb).orders.get(5))).message).toContain('GET refused');
  });
});

describe('orders.search', () => {
  const ids = (result: { items: Array<{ entity_id: number }> }) => result.items.map((o) => o.entity_id);

  it('filters by status, sorted by entity_id, with the total count', async () => {
    const result = await payFor(sb).orders.search({ status: 'pending', pageSize: 500 });
    const expected = range(1, 400).filter((id) => sb.commerce.order(id)!.status === 'pending');
    expect(ids(result)).toEqual(expected);
    expect(result.total_count).toBe(expected.length);
    expect(result.search_criteria.filter_groups).toEqual([{ filters: [{ field: 'status', value: 'pending', condition_type: 'eq' }] }]);
  });

  it('finds an order by its increment_id (the number the shopper sees), and nothing for an unknown one', async () => {
    const pay = payFor(sb);
    const result = await pay.orders.search({ incrementId: '000000042' });
    expect(ids(result)).toEqual([42]);
    expect(result.search_criteria.filter_groups).toEqual([{ filters: [{ field: 'increment_id', value: '000000042', condition_type: 'eq' }] }]);
    expect((await pay.orders.search({ incrementId: 'no-such-order' })).items).toEqual([]);
    await expect(pay.orders.search({ incrementId: ' ' })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'incrementId' } });
  });

  it('stops at its signal, rejecting with the signal’s reason as fetch does, before the platform is asked', async () => {
    const pay = payFor(sb);
    await pay.orders.search({ pageSize: 1 }); // the admin token is cached: only the search itself is left to stop
    const before = sb.commerce.stats().searches;
    const reason = new Error('report cancelled');
    await expect(pay.orders.search({ status: 'pending', signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(sb.commerce.stats().searches).toBe(before); // the signal was ignored: the search ran and answered
  });

  it('answers one page of 100 unless told otherwise', async () => {
    const result = await payFor(sb).orders.search();
    expect(ids(result)).toEqual(range(1, 100));
    expect(result.total_count).toBeGreaterThanOrEqual(400);
    expect(result.search_criteria).toMatchObject({ page_size: 100, sort_orders: [{ field: 'entity_id', direction: 'ASC' }] });
  });

  it('puts from and to in separate groups (in one group they would OR: every order)', async () => {
    const from = sb.commerce.order(100)!.created_at as string;
    const to = sb.commerce.order(110)!.created_at as string;
    const result = await payFor(sb).orders.search({ createdFrom: from, createdTo: to });
    expect(ids(result)).toEqual(range(1, 400).filter((id) => {
      const at = sb.commerce.order(id)!.created_at as string;
      return at >= from && at <= to;
    }));
    expect(result.search_criteria.filter_groups).toHaveLength(2);
  });

  it('includes both boundaries to the second, and excludes one second outside', async () => {
    const same = '2031-05-05 10:00:00';
    sb.commerce.setOrder(200, { created_at: '2031-05-05 09:59:59' });
    sb.commerce.setOrder(201, { created_at: same });
    sb.commerce.setOrder(202, { created_at: same });
    sb.commerce.setOrder(203, { created_at: '2031-05-05 10:00:01' });
    const pay = payFor(sb);
    expect(ids(await pay.orders.search({ createdFrom: same, createdTo: same }))).toEqual([201, 202]);
    expect(ids(await pay.orders.search({ createdFrom: '2031-05-05 09:59:59', createdTo: same }))).toEqual([200, 201, 202]);
    expect(ids(await pay.orders.search({ createdFrom: same, createdTo: '2031-05-05 10:00:01' }))).toEqual([201, 202, 203]);
    // A Date is formatted in UTC.
    expect(ids(await pay.orders.search({ createdFrom: new Date(Date.UTC(2031, 4, 5, 10, 0, 0)), createdTo: new Date('2031-05-05T12:00:00+02:00') }))).toEqual([201, 202]);
    // The platform keeps whole seconds: a Date within one moves to the whole second inside the window.
    const withinSecond = await pay.orders.search({ createdFrom: new Date('2031-05-05T09:59:59.001Z'), createdTo: new Date('2031-05-05T10:00:01.999Z') });
    expect(ids(withinSecond)).toEqual([201, 202, 203]);
    expect(withinSecond.search_criteria.filter_groups.map((group) => group.filters[0]!.value)).toEqual([same, '2031-05-05 10:00:01']);
    // Within one second, after its whole second: no stored time can fall between them.
    await expect(pay.orders.search({ createdFrom: new Date('2031-05-05T10:00:00.100Z'), createdTo: new Date('2031-05-05T10:00:00.500Z') })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'createdFrom' } });
  });

  it('combines status, dates and pages', async () => {
    const pay = payFor(sb);
    const all = await pay.orders.search({ status: ['processing', 'complete'], createdFrom: '2025-03-01 00:00:00' });
    const second = await pay.orders.search({ status: ['processing', 'complete'], createdFrom: '2025-03-01 00:00:00', pageSize: 10, currentPage: 2 });
    expect(ids(second)).toEqual(ids(all).slice(10, 20));
    expect(second.total_count).toBe(all.total_count);
    expect(second.search_criteria).toMatchObject({ page_size: 10, current_page: 2 });
    expect(all.items.every((o) => o.status !== 'pending')).toBe(true);
  });

  it.each([
    [{ createdFrom: '2025-01-01' }, 'createdFrom'],
    [{ createdFrom: '2025-02-30 00:00:00' }, 'createdFrom'],
    // The years a Date is held to as well (Date.UTC would read 0050 as 1950).
    [{ createdFrom: '0999-12-31 00:00:00' }, 'createdFrom'],
    [{ createdTo: new Date(Date.UTC(999, 11, 31)) }, 'createdTo'],
    [{ createdTo: new Date('nope') }, 'createdTo'],
    [{ createdFrom: '2025-02-02 00:00:00', createdTo: '2025-02-01 00:00:00' }, 'createdFrom'],
    [{ status: '' }, 'status'],
    [{ status: 'a,b' }, 'status'],
    // Would match nothing, and a sync would report no orders as if none had the status.
    [{ status: ' pending' }, 'status'],
    [{ incrementId: '000000042 ' }, 'incrementId'],
    // Not sendable as UTF-8 (the echo check would then blame the platform).
    [{ status: '\ud800' }, 'status'],
    [{ pageSize: 0 }, 'pageSize'],
    [{ currentPage: 1.5 }, 'currentPage'],
  ])('refuses %j with INVALID_INPUT', async (query, field) => {
    const error = await rejection(payFor(sb).orders.search(query as never));
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.details).toEqual({ field });
  });

  it('refuses a status or order number too long to be one, before the platform answers 414 or 431 (blamed on its URL)', async () => {
    for (const query of [{ status: 'x'.repeat(256) }, { incrementId: 'x'.repeat(100_000) }]) {
      const error = await rejection(payFor(sb).orders.search(query));
      expect(error.code).toBe('INVALID_INPUT');
      expect(error.message).toMatch(/must be at most 255 characters \(got \d+\)/);
    }
  });

  it('refuses a result whose search_criteria echo differs from what was sent', async () => {
    const body = JSON.stringify({ items: [], total_count: 0, search_criteria: { filter_groups: [] } });
    sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders', status: 200, body });
    const error = await rejection(payFor(sb).orders.search({ status: 'pending' }));
    expect(error.code).toBe('UPSTREAM_INVALID_RESPONSE');
    expect(error.message).toContain("sent filters [status eq 'pending'] but the platform applied []");
  });

  it('refuses a result whose echo shows another page size, page or sort order than was sent', async () => {
    const echoing = (criteria: Record<string, unknown>) => JSON.stringify({ items: [], total_count: 0, search_criteria: { filter_groups: [], ...criteria } });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ page_size: 50 }, 'sent pageSize 100 but the platform used 50'],
      [{ page_size: 100, current_page: 1 }, 'asked for page 2 but the platform answered page 1'],
      [{ sort_orders: [{ field: 'entity_id', direction: 'DESC' }] }, 'sorted by entity_id ASC but the platform sorted by entity_id DESC'],
      [{ sort_orders: [{ field: 'created_at', direction: 'ASC' }] }, 'sorted by entity_id ASC but the platform sorted by created_at ASC'],
    ];
    for (const [criteria, message] of cases) {
      sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders', status: 200, body: echoing(criteria) });
      const error = await rejection(payFor(sb).orders.search({ pageSize: 100, currentPage: 2 }));
      expect([error.code, error.message]).toEqual(['UPSTREAM_INVALID_RESPONSE', expect.stringContaining(message)]);
    }
    // On the first page, a smaller page size echoed is a cap the platform applied and said so: its orders are taken
    // (paging by key goes on from the last one); a larger one is still refused.
    sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders', status: 200, body: echoing({ page_size: 50, current_page: 1 }) });
    expect(await payFor(sb).orders.search({ pageSize: 100, currentPage: 1 })).toMatchObject({ search_criteria: { page_size: 50 } });
    sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders', status: 200, body: echoing({ page_size: 200, current_page: 1 }) });
    expect((await rejection(payFor(sb).orders.search({ pageSize: 100, currentPage: 1 }))).message).toContain('sent pageSize 100 but the platform used 200');
    // The same echo as sent, in lower case: the same order.
    sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders', status: 200, body: echoing({ page_size: 100, current_page: 2, sort_orders: [{ field: 'entity_id', direction: 'asc' }] }) });
    expect(await payFor(sb).orders.search({ pageSize: 100, currentPage: 2 })).toMatchObject({ items: [], total_count: 0 });
  });

  it('puts the parameters into Magento messages for people and keeps the raw body for code', async () => {
    sb.commerce.setMaxPageSize(50);
    try {
      const error = await rejection(payFor(sb).orders.search({ pageSize: 80 }));
      expect(error).toBeInstanceOf(CommerceError);
      expect(error.code).toBe('COMMERCE_ERROR');
      expect(error.message).toContain('Maximum SearchCriteria pageSize is 50');
      expect((error as CommerceError).body).toEqual({ message: 'Maximum SearchCriteria pageSize is %max', parameters: { max: 50 } });
      expect((error as CommerceError).maxPageSize).toBe(50);
      // And what to ask for instead.
      expect(error.message).toContain('ask for at most 50 orders a page (pageSize)');
    } finally {
      sb.commerce.setMaxPageSize(undefined);
    }
  });

  it('formats positional and named parameters', () => {
    expect(formatMagentoMessage('No such entity with %fieldName = %fieldValue', { fieldName: 'id', fieldValue: 7 })).toBe('No such entity with id = 7');
    expect(formatMagentoMessage('%1 of %2 (%3)', ['a', 2])).toBe('a of 2 (%3)');
    expect(formatMagentoMessage('Providers: %active_providers', { active_providers: ['google', 'authy'] })).toBe('Providers: google, authy');
  });
});

describe('orders.iterate behind a platform that caps the page size and says so in its echo', () => {
  it('reads every order once, in order, from the smaller pages', async () => {
    // A gateway in front of the platform that lowers searchCriteria[pageSize] past 50: the platform echoes 50.
    const proxy = createServer((req, res) => {
      const target = new URL(req.url!.replace(/searchCriteria%5BpageSize%5D=\d+|searchCriteria\[pageSize\]=\d+/, (m) => (Number(m.split('=')[1]) > 50 ? m.replace(/=\d+$/, '=50') : m)), sb.commerceUrl);
      const upstream = httpRequest(target, { method: req.method, headers: { ...req.headers, host: target.host } }, (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      });
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const viaProxy = payFor(sb, { commerce: { url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` } });
      const ids: number[] = [];
      for await (const order of viaProxy.orders.iterate({ pageSize: 100 })) ids.push(order.entity_id);
      const direct: number[] = [];
      for await (const order of payFor(sb).orders.iterate({ pageSize: 100 })) direct.push(order.entity_id);
      expect(ids).toEqual(direct);
      expect(ids.length).toBeGreaterThan(100);
    } finally {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });
});

describe('pay.orders without a commerce platform', () => {
  it('creates the instance, and says what to configure at first use', async () => {
    const pay = createPay({ env: {}, payment: { apiUrl: 'http://127.0.0.1:9', merchantId: 'm', apiKey: 'k', webhookSecret: 's' } });
    for (const call of [() => pay.orders.get(1), () => pay.orders.search(), () => pay.orders.sync({ checkpoint: 'c', onOrder: () => {} })]) {
      const error = await rejection(call());
      expect(error.code).toBe('CONFIG_MISSING');
      expect(error.message).toMatch(/COMMERCE_URL.*COMMERCE_USERNAME.*COMMERCE_PASSWORD/);
    }
    expect(() => pay.orders.iterate()).toThrow(/COMMERCE_URL/);
  });

  it('names the missing variable when the platform is half configured', async () => {
    const pay = createPay({ env: { COMMERCE_URL: 'http://127.0.0.1:9' }, payment: { apiUrl: 'http://127.0.0.1:9', merchantId: 'm', apiKey: 'k', webhookSecret: 's' } });
    await expect(pay.orders.get(1)).rejects.toMatchObject({ code: 'CONFIG_MISSING', message: expect.stringMatching(/commerce\.username \(environment variable COMMERCE_USERNAME\)/) });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { adminToken, criteria, read } from './commerce-helpers.js';

let sb: Sandbox;
let token: string;
beforeAll(async () => {
  sb = await startSandbox({ commerce: { orders: 500, seed: 11 } });
  token = await adminToken(sb);
});
afterAll(() => sb.close());

const ids = (json: { items: Array<{ entity_id: number }> }) => json.items.map((o) => o.entity_id);
const search = async (query: string, method = 'GET') => {
  const res = await read(sb, token, `/rest/default/V1/orders?${query}`, method);
  expect(res.status).toBe(200);
  return res.json as { items: Array<Record<string, unknown> & { entity_id: number }>; total_count: number; search_criteria: Record<string, unknown> };
};
const all = () => Array.from({ length: sb.commerce.orderCount }, (_, i) => sb.commerce.order(i + 1)!);

describe('commerce sandbox: one order', () => {
  it('serves it on GET and POST, with and without the scope segment', async () => {
    const expected = sb.commerce.order(42);
    for (const [method, path] of [['GET', '/rest/default/V1/orders/42'], ['POST', '/rest/default/V1/orders/42'], ['GET', '/rest/V1/orders/42'], ['POST', '/rest/V1/orders/42']] as const) {
      const res = await read(sb, token, path, method);
      expect(res.status).toBe(200);
      expect(res.json).toEqual(expected);
    }
  });

  it('answers 404 with Magento\'s body for a missing order, and for an unknown route', async () => {
    for (const path of ['/rest/V1/orders/9999', '/rest/V1/orders/0']) {
      expect(await read(sb, token, path)).toMatchObject({ status: 404, json: { message: "The entity that was requested doesn't exist. Verify the entity and try again." } });
    }
    // Magento's TypeProcessor reads the id as an int: anything but a number is a 400, and '42.0' is order 42.
    expect(await read(sb, token, '/rest/V1/orders/abc')).toMatchObject({ status: 400, json: { message: 'The "%value" value\'s type is invalid. The "%type" type was expected. Verify and try again.', parameters: { value: 'abc', type: 'int' } } });
    expect(await read(sb, token, '/rest/V1/orders/42.0')).toMatchObject({ status: 200, json: { entity_id: 42 } });
    expect(await read(sb, token, '/rest/V1/customers/1')).toMatchObject({ status: 404, json: { message: 'Request does not match any route.' } });
    expect((await read(sb, token, '/rest/V1/orders/1', 'DELETE')).status).toBe(405);
  });

  it('answers 404 no-route for a store code it does not have, token or not, as Magento reads it as part of the path', async () => {
    for (const [method, path] of [['GET', '/rest/nostore/V1/orders/1'], ['POST', '/rest/nostore/V1/orders/1'], ['GET', `/rest/nostore/V1/orders?${criteria([], { pageSize: 5 })}`], ['POST', '/rest/nostore/V1/orders']] as const) {
      for (const auth of [token, undefined]) {
        const res = await read(sb, auth, path, method);
        expect(res.status).toBe(404);
        expect(res.json).toEqual({ message: 'Request does not match any route.' });
      }
    }
  });

  it('generates realistic orders: the fixtures\' shape, states, currencies and dates', () => {
    const orders = all();
    const states = new Set(orders.map((o) => `${o.state}/${o.status}`));
    expect(states).toEqual(new Set(['new/pending', 'processing/processing', 'complete/complete']));
    expect(new Set(orders.map((o) => o.order_currency_code))).toEqual(new Set(['USD', 'EUR', 'JPY', 'KWD']));
    const dates = orders.map((o) => o.created_at as string);
    expect([...dates].sort()).toEqual(dates); // ascending with entity_id
    expect(dates[0]! >= '2025-01-01 00:00:00' && dates.at(-1)! <= '2026-01-02 00:00:00').toBe(true);
    for (const o of orders) {
      const exp = { JPY: 0, KWD: 3 }[o.order_currency_code as string] ?? 2;
      const minor = Math.round((o.grand_total as number) * 10 ** exp);
      expect(String(o.grand_total)).toBe(String(minor / 10 ** exp)); // no more decimals than the currency has
      expect(o.increment_id).toBe(String(o.entity_id).padStart(9, '0'));
      if (o.state === 'new') expect([o.total_paid, o.total_due]).toEqual([undefined, o.grand_total]);
      else expect([o.total_paid, o.total_due]).toEqual([o.grand_total, 0]);
    }
    const sample = orders[0]!;
    expect(Object.keys(sample)).toEqual(expect.arrayContaining(['items', 'billing_address', 'payment', 'status_histories', 'extension_attributes', 'store_name', 'protect_code']));
  });

  it('is deterministic by seed, and serves a platform of 300,000 orders', async () => {
    const again = await startSandbox({ commerce: { orders: 500, seed: 11 } });
    const other = await startSandbox({ commerce: { orders: 500, seed: 12 } });
    const big = await startSandbox({ commerce: { orders: 300_000 } });
    try {
      expect(again.commerce.order(77)).toEqual(sb.commerce.order(77));
      expect(other.commerce.order(77)).not.toEqual(sb.commerce.order(77));
      expect(big.commerce.orderCount).toBe(300_000);
      const bigToken = await adminToken(big);
      const res = await read(big, bigToken, `/rest/V1/orders?${criteria([[['status', 'pending', 'eq']], [['created_at', '2025-12-01 00:00:00', 'from']]], { pageSize: 5, currentPage: 3 })}`);
      expect(res.status).toBe(200);
      expect(res.json.items).toHaveLength(5);
      expect(res.json.total_count).toBeGreaterThan(5_000);
    } finally {
      await Promise.all([again.close(), other.close(), big.close()]);
    }
  });

  it('adds and changes orders for tests', async () => {
    const before = sb.commerce.orderCount;
    const added = sb.commerce.addOrder({ order_currency_code: 'KWD', grand_total: 1.5 });
    expect(added).toMatchObject({ entity_id: before + 1, order_currency_code: 'KWD', grand_total: 1.5, state: 'new' });
    expect((await read(sb, token, `/rest/V1/orders/${added.entity_id}`)).json).toEqual(added);
    sb.commerce.setOrder(3, { status: 'holded', state: 'holded' });
    expect((await read(sb, token, '/rest/V1/orders/3')).json).toMatchObject({ entity_id: 3, status: 'holded' });
    expect((await search(criteria([[['status', 'holded', 'eq']]]))).items.map((o) => o.entity_id)).toEqual([3]);
    expect(() => sb.commerce.setOrder(123_456, {})).toThrow(TypeError);
  });
});

describe('commerce sandbox: search criteria', () => {
  it('ANDs groups and ORs the filters inside a group', async () => {
    const byStatus = (s: string) => all().filter((o) => o.status === s).map((o) => o.entity_id);
    const either = await search(criteria([[['status', 'pending', 'eq'], ['status', 'complete', 'eq']]]));
    expect(ids(either)).toEqual([...byStatus('pending'), ...byStatus('complete')].sort((a, b) => a - b));
    const both = await search(criteria([[['status', 'pending', 'eq']], [['entity_id', '100', 'lteq']]]));
    expect(ids(both)).toEqual(byStatus('pending').filter((id) => id <= 100));
    // from and to in ONE group OR each other: everything matches.
    const oneGroup = await search(criteria([[['created_at', '2025-06-01 00:00:00', 'from'], ['created_at', '2025-07-01 00:00:00', 'to']]]));
    expect(oneGroup.total_count).toBe(sb.commerce.orderCount);
  });

  it.each<[string, string, (o: Record<string, unknown>) => boolean]>([
    ['eq', '20', (o) => o.entity_id === 20],
    ['neq', '20', (o) => o.entity_id !== 20],
    ['gt', '480', (o) => (o.entity_id as number) > 480],
    ['gteq', '480', (o) => (o.entity_id as number) >= 480],
    ['lt', '5', (o) => (o.entity_id as number) < 5],
    ['lteq', '5', (o) => (o.entity_id as number) <= 5],
    ['in', '3,9,27', (o) => [3, 9, 27].includes(o.entity_id as number)],
    ['nin', '3,9,27', (o) => ![3, 9, 27].includes(o.entity_id as number)],
  ])('entity_id %s %s', async (condition, value, expected) => {
    expect(ids(await search(criteria([[['entity_id', value, condition]]])))).toEqual(all().filter(expected).map((o) => o.entity_id));
  });

  it('compares dates as timestamps, inclusive at from/to, and matches like patterns', async () => {
    const at = sb.commerce.order(250)!.created_at as string;
    const exact = await search(criteria([[['created_at', at, 'from']], [['created_at', at, 'to']]]));
    expect(ids(exact)).toEqual(all().filter((o) => o.created_at === at).map((o) => o.entity_id));
    expect(ids(exact)).toContain(250);
    expect(ids(await search(criteria([[['created_at', at, 'gt']]])))[0]).toBeGreaterThan(250);
    const email = sb.commerce.order(7)!.customer_email as string;
    expect(ids(await search(criteria([[['customer_email', `%${email.slice(2).toUpperCase()}`, 'like']]])))).toEqual([7]);
    expect(ids(await search(criteria([[['increment_id', '00000001_', 'like']]])))).toEqual([10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
  });

  it('pages, sorts and echoes only what was sent', async () => {
    const page = await search(criteria([[['status', 'complete', 'eq']]], { pageSize: 7, currentPage: 2, 'sortOrders][0][field': 'entity_id', 'sortOrders][0][direction': 'DESC' }));
    const complete = all().filter((o) => o.status === 'complete').map((o) => o.entity_id).reverse();
    expect(ids(page)).toEqual(complete.slice(7, 14));
    expect(page.total_count).toBe(complete.length);
    expect(page.search_criteria).toEqual({
      filter_groups: [{ filters: [{ field: 'status', value: 'complete', condition_type: 'eq' }] }],
      sort_orders: [{ field: 'entity_id', direction: 'DESC' }],
      page_size: 7,
      current_page: 2,
    });
    const bare = await search(criteria([[['status', 'complete']]]));
    // Magento's Filter::getConditionType() answers `eq` for a filter sent without one (fixture orders-search-vsf.json).
    expect(bare.search_criteria).toEqual({ filter_groups: [{ filters: [{ field: 'status', value: 'complete', condition_type: 'eq' }] }] });
    expect(bare.items).toHaveLength(complete.length); // no pageSize: everything
    const sorted = await search(criteria([], { pageSize: 5, 'sortOrders][0][field': 'grand_total', 'sortOrders][0][direction': 'ASC' }));
    const totals = sorted.items.map((o) => o.grand_total as number);
    expect(totals).toEqual([...totals].sort((a, b) => a - b));
    // A field some orders lack sorts as MySQL sorts NULL: first going up, last going down.
    sb.commerce.setOrder(3, { customer_note: 'b' });
    sb.commerce.setOrder(5, { customer_note: 'a' });
    const notes = async (direction: string) => (await search(criteria([[['entity_id', '6', 'lt']]], { 'sortOrders][0][field': 'customer_note', 'sortOrders][0][direction': direction }))).items.map((o) => o.entity_id);
    expect(await notes('ASC')).toEqual([1, 2, 4, 5, 3]);
    expect(await notes('DESC')).toEqual([3, 5, 1, 2, 4]);
  });

  it('echoes only the last of two filters sent with the same indexes', async () => {
    const q = `${criteria([[['created_at', '2025-03-01 00:00:00', 'from']]])}&${criteria([[['created_at', '2025-04-01 00:00:00', 'to']]])}`;
    const res = await search(q);
    expect(res.search_criteria.filter_groups).toEqual([{ filters: [{ field: 'created_at', value: '2025-04-01 00:00:00', condition_type: 'to' }] }]);
  });

  it('answers past the end with no items, or with the last page again in the old mode', async () => {
    const q = (page: number) => criteria([], { pageSize: 100, currentPage: page });
    expect((await search(q(99))).items).toEqual([]);
    sb.commerce.setLastPageAgain(true);
    try {
      expect(ids(await search(q(99)))).toEqual(ids(await search(q(Math.ceil(sb.commerce.orderCount / 100)))));
    } finally {
      sb.commerce.setLastPageAgain(false);
    }
  });

  it('refuses a page size over the cap (Magento 2.4.7\'s named parameter) and a non-numeric page size with 400', async () => {
    sb.commerce.setMaxPageSize(300);
    try {
      expect((await search(criteria([], { pageSize: 300 }))).items).toHaveLength(300);
      const over = await read(sb, token, `/rest/V1/orders?${criteria([], { pageSize: 301 })}`);
      expect(over.status).toBe(400);
      expect(over.json).toEqual({ message: 'Maximum SearchCriteria pageSize is %max', parameters: { max: 300 } });
    } finally {
      sb.commerce.setMaxPageSize(undefined);
    }
    expect((await read(sb, token, `/rest/V1/orders?${criteria([], { pageSize: 'ten' })}`)).status).toBe(400);
  });

  it('refuses a search with no searchCriteria at all, as a required parameter, on GET and POST', async () => {
    for (const method of ['GET', 'POST']) {
      for (const path of ['/rest/V1/orders', '/rest/default/V1/orders', '/rest/V1/orders?other=1']) {
        const res = await read(sb, token, path, method);
        expect(res.status).toBe(400);
        expect(res.json).toEqual({ message: '"%fieldName" is required. Enter and try again.', parameters: { fieldName: 'searchCriteria' } });
      }
    }
    // A bare `searchCriteria` is one: every order.
    expect((await search('searchCriteria')).total_count).toBe(sb.commerce.orderCount);
  });

  it('reads an unknown condition type as eq (Magento\'s SQL layer), echoing it as sent', async () => {
    const pending = all().filter((o) => o.status === 'pending').map((o) => o.entity_id);
    const res = await search(criteria([[['status', 'pending', 'almost']]]));
    expect(ids(res)).toEqual(pending);
    expect(res.search_criteria).toEqual({ filter_groups: [{ filters: [{ field: 'status', value: 'pending', condition_type: 'almost' }] }] });
    expect(ids(await search(criteria([[['entity_id', '20', 'almost']]])))).toEqual([20]);
  });

  it('compares text case-insensitively, as Magento\'s utf8_general_ci columns do, and sorts it so', async () => {
    const byStatus = (s: string) => all().filter((o) => o.status === s).map((o) => o.entity_id);
    expect(ids(await search(criteria([[['status', 'Pending', 'eq']]])))).toEqual(byStatus('pending'));
    expect(ids(await search(criteria([[['status', 'PENDING,Complete', 'in']]])))).toEqual([...byStatus('pending'), ...byStatus('complete')].sort((a, b) => a - b));
    expect(ids(await search(criteria([[['status', 'Pending', 'neq']]])))).toEqual(all().filter((o) => o.status !== 'pending').map((o) => o.entity_id));
    sb.commerce.setOrder(8, { customer_note: 'b' });
    sb.commerce.setOrder(9, { customer_note: 'A' });
    sb.commerce.setOrder(10, { customer_note: 'C' });
    const notes = await search(criteria([[['entity_id', '8', 'gteq']], [['entity_id', '10', 'lteq']]], { 'sortOrders][0][field': 'customer_note', 'sortOrders][0][direction': 'ASC' }));
    expect(ids(notes)).toEqual([9, 8, 10]);
  });

  it('reads seq and sneq as eq and neq, or with an empty value as IS NULL and IS NOT NULL (Magento\'s strict conditions)', async () => {
    const guests = all().filter((o) => o.customer_id === undefined).map((o) => o.entity_id);
    expect(ids(await search(criteria([[['status', 'complete', 'seq']]])))).toEqual(all().filter((o) => o.status === 'complete').map((o) => o.entity_id));
    expect(ids(await search(criteria([[['status', 'complete', 'sneq']]])))).toEqual(all().filter((o) => o.status !== 'complete').map((o) => o.entity_id));
    expect(ids(await search(criteria([[['customer_id', '', 'seq']]])))).toEqual(guests);
    expect(ids(await search(criteria([[['customer_id', '', 'sneq']]])))).toEqual(all().map((o) => o.entity_id).filter((id) => !guests.includes(id)));
    expect(ids(await search(criteria([[['entity_id', '20', 'seq']]])))).toEqual([20]);
  });

  it('matches finset and nfinset against a field\'s comma-separated items (MySQL\'s FIND_IN_SET)', async () => {
    sb.commerce.setOrder(11, { customer_note: 'gift,Express,fragile' });
    sb.commerce.setOrder(12, { customer_note: 'express delivery' });
    const noted = [[['customer_note', '', 'notnull']]] as [string, string, string][][];
    expect(ids(await search(criteria([...noted, [['customer_note', 'express', 'finset']]])))).toEqual([11]);
    expect(ids(await search(criteria([...noted, [['customer_note', 'gift,express', 'finset']]])))).toEqual([]); // a value with a comma is in no set
    const others = ids(await search(criteria([...noted, [['customer_note', 'express', 'nfinset']]])));
    expect(others).toContain(12);
    expect(others).not.toContain(11);
  });

  it('matches regexp case-insensitively, and answers a pattern that does not compile with Magento\'s 500', async () => {
    const email = sb.commerce.order(7)!.customer_email as string;
    const local = email.split('@')[0]!.toUpperCase().replace('.', '\\.');
    expect(ids(await search(criteria([[['customer_email', `^${local}@`, 'regexp']]])))).toEqual([7]);
    expect(ids(await search(criteria([[['increment_id', '^0+1[0-2]$', 'regexp']]])))).toEqual([10, 11, 12]);
    const broken = await read(sb, token, `/rest/V1/orders?${criteria([[['status', '(unclosed', 'regexp']]])}`);
    expect(broken.status).toBe(500);
    expect((broken.json as { message: string }).message).toMatch(/^Internal Error\. Details are available in Magento log file\. Report ID: webapi-[0-9a-f]+$/);
  });

  it('matches an absent or null field with null, and any other with notnull, the value ignored (IS NULL / IS NOT NULL)', async () => {
    const guests = all().filter((o) => o.customer_id === undefined || o.customer_id === null).map((o) => o.entity_id);
    expect(guests.length).toBeGreaterThan(0);
    expect(ids(await search(criteria([[['customer_id', 'ignored', 'null']]])))).toEqual(guests);
    expect(ids(await search(criteria([[['customer_id', '', 'notnull']]])))).toEqual(all().map((o) => o.entity_id).filter((id) => !guests.includes(id)));
  });

  it('splits in / nin lists on commas without trimming the values', async () => {
    const byStatus = (s: string) => all().filter((o) => o.status === s).map((o) => o.entity_id);
    expect(ids(await search(criteria([[['status', 'pending,complete', 'in']]])))).toEqual([...byStatus('pending'), ...byStatus('complete')].sort((a, b) => a - b));
    // ' complete' is not 'complete': only the pending orders match, and nin keeps the complete ones.
    expect(ids(await search(criteria([[['status', 'pending, complete', 'in']]])))).toEqual(byStatus('pending'));
    expect(ids(await search(criteria([[['status', 'pending, complete', 'nin']]])))).toEqual(all().filter((o) => o.status !== 'pending').map((o) => o.entity_id));
  });

  it('reads searchCriteria keys such as __proto__ as names, never reaching Object.prototype', async () => {
    const polluting = `/rest/V1/orders?searchCriteria[__proto__][pageSize]=5&searchCriteria[constructor][prototype][polluted]=yes&${criteria([], { pageSize: 7 })}`;
    expect((await read(sb, token, polluting)).status).toBe(200);
    expect(({} as Record<string, unknown>).pageSize).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // A search that sends no page size is not cut to the injected one.
    expect((await search(criteria([[['entity_id', '30', 'lteq']]]))).items).toHaveLength(30);
  });

  it('applies fault rules to /rest/ routes only, with Magento-style bodies', async () => {
    sb.commerce.faults.inject({ route: 'GET /rest/V1/orders/:id', status: 503 });
    expect(await read(sb, token, '/rest/V1/orders/1')).toMatchObject({ status: 503, json: { message: 'Fault injected by the sandbox (HTTP 503).' } });
    expect((await read(sb, token, '/rest/V1/orders/1')).status).toBe(200);
    expect(sb.faults.list()).toEqual([]); // the payment service's rules are separate
  });
});

describe('commerce sandbox: key-bounded searches (a window onto the match list)', () => {
  const idsWhere = (keep: (o: Record<string, unknown>) => boolean) => all().filter(keep).map((o) => o.entity_id as number);

  it('contradictory bounds (gt 100 and lt 50, in separate groups) match nothing', async () => {
    for (const extra of [{}, { pageSize: 10 }, { pageSize: 10, currentPage: 2 }] as Record<string, number>[]) {
      const res = await search(criteria([[['entity_id', '100', 'gt']], [['entity_id', '50', 'lt']]], extra));
      expect(res.items).toEqual([]);
      expect(res.total_count).toBe(0);
    }
  });

  it('entity_id gt N pages through the ids above N; total_count counts all of them; past the end is empty', async () => {
    const above = idsWhere((o) => (o.entity_id as number) > 450);
    expect(above.length).toBeGreaterThan(40); // three pages of 20, the last one partial
    const page = (currentPage: number) => search(criteria([[['entity_id', '450', 'gt']]], { pageSize: 20, currentPage }));
    for (const n of [1, 2, 3]) {
      const res = await page(n);
      expect(ids(res)).toEqual(above.slice((n - 1) * 20, n * 20));
      expect(res.total_count).toBe(above.length);
    }
    const past = await page(4);
    expect(past.items).toEqual([]);
    expect(past.total_count).toBe(above.length);
  });

  it('bounds on both sides, and a bound over a filtered list, window the right ids', async () => {
    const between = await search(criteria([[['entity_id', '100', 'gteq']], [['entity_id', '120', 'lteq']]], { pageSize: 50 }));
    expect(ids(between)).toEqual(idsWhere((o) => (o.entity_id as number) >= 100 && (o.entity_id as number) <= 120));
    expect(between.total_count).toBe(21);
    const complete = idsWhere((o) => o.status === 'complete' && (o.entity_id as number) > 200);
    const res = await search(criteria([[['status', 'complete', 'eq']], [['entity_id', '200', 'gt']]], { pageSize: 15, currentPage: 2 }));
    expect(ids(res)).toEqual(complete.slice(15, 30));
    expect(res.total_count).toBe(complete.length);
  });
});

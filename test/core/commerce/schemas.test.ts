import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from 'paywidget-server/sandbox';
import { orderSchema, orderSearchResultSchema } from '../../../src/core/commerce/schemas.js';
import { commerceSandbox, payFor, rejection } from './helpers.js';

const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`../../fixtures/commerce/${name}`, import.meta.url), 'utf8'));

describe('order schemas: the recorded responses', () => {
  it('parse the full order of the Adobe docs (bundle children, shipping assignments, unknown fields kept)', () => {
    const order = orderSchema.parse(fixture('order-get-adobedocs.json'));
    expect(order.entity_id).toBe(3);
    expect(order.items).toHaveLength(9);
    expect(order.applied_rule_ids).toBe('1'); // not in the document: kept
    expect(order.items[3]).toMatchObject({ parent_item_id: 5, parent_item: expect.objectContaining({ item_id: 5 }) });
    expect(order.store_name).toBe('Main Website\nMain Website Store\n');
    expect(order.status_histories).toEqual([]);
    expect(order.total_paid).toBeUndefined(); // absent on an unpaid order
    expect(order.extension_attributes?.shipping_assignments?.[0]?.shipping.method).toBe('tablerate_bestway');
  });

  it('parse the search result with a guest order, a null telephone and decimal money', () => {
    const result = orderSearchResultSchema.parse(fixture('orders-search-vsf.json'));
    expect(result.total_count).toBe(61);
    const [order] = result.items;
    expect(order?.customer_id).toBeUndefined();
    expect(order?.billing_address?.telephone).toBeNull();
    expect(order?.billing_address?.vat_id).toBe('PL8951930748');
    expect(order?.subtotal_incl_tax).toBe(27.06);
    expect(result.search_criteria.filter_groups[0]?.filters[0]).toEqual({ field: 'customer_email', value: 'pkarwatka28@example.com', condition_type: 'eq' });
  });

  it('refuse a wrong type, naming the path of the field', () => {
    const order = fixture('order-get-adobedocs.json') as Record<string, unknown>;
    const bad = { ...order, grand_total: '165.00', items: [{ ...(order.items as object[])[0], qty_ordered: 'one' }] };
    const result = orderSchema.safeParse(bad);
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.path.join('.'))).toEqual(expect.arrayContaining(['grand_total', 'items.0.qty_ordered']));
  });

  it('accept every generated sandbox order', async () => {
    const sb = await commerceSandbox({ orders: 300, seed: 7 });
    try {
      for (let id = 1; id <= 300; id++) expect(orderSchema.safeParse(sb.commerce.order(id)).success).toBe(true);
    } finally {
      await sb.close();
    }
  });
});

describe('orders.get validation over HTTP', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await commerceSandbox({ orders: 20 });
  });
  afterAll(() => sb.close());

  it('is UPSTREAM_INVALID_RESPONSE naming the bad field', async () => {
    sb.commerce.setOrder(4, { grand_total: 'lots', order_currency_code: 'euro' });
    const error = await rejection(payFor(sb).orders.get(4));
    expect(error.code).toBe('UPSTREAM_INVALID_RESPONSE');
    expect(error.status).toBe(502);
    expect(error.message).toMatch(/order 4/);
    expect(error.message).toMatch(/grand_total/);
    expect(error.message).toMatch(/order_currency_code/);
  });

  it('names the item path inside a search page', async () => {
    const order = sb.commerce.order(6)!;
    sb.commerce.setOrder(6, { items: [{ ...(order.items as object[])[0], item_id: 'x' }] });
    const error = await rejection(payFor(sb).orders.search({ afterEntityId: 5, pageSize: 1 }));
    expect(error.code).toBe('UPSTREAM_INVALID_RESPONSE');
    expect(error.message).toContain('items[0] (entity_id 6).items[0].item_id');
  });
});

/** findOrderById: the order a payment names, by increment_id, else by entity_id; none for an id no order number can be. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from 'paywidget-server/sandbox';
import { findOrderById } from '../../../src/core/commerce/find-order.js';
import { commerceSandbox, payFor } from './helpers.js';

let sb: Sandbox;
beforeAll(async () => {
  sb = await commerceSandbox({ orders: 20, seed: 5 });
});
afterAll(() => sb.close());

describe('findOrderById', () => {
  it('finds an order by its increment_id, and by its entity_id', async () => {
    const { orders } = payFor(sb);
    expect((await findOrderById(orders, '000000007'))?.entity_id).toBe(7);
    expect((await findOrderById(orders, '7'))?.increment_id).toBe('000000007');
    expect(await findOrderById(orders, 'no-such-order')).toBeUndefined();
  });

  it.each([
    ['a surrounding space', ' 000000007'],
    ['256 characters', 'R'.repeat(256)],
    ['half a surrogate pair', 'order-\ud800'],
  ])('answers none for an id with %s, which a search by increment_id would refuse', async (_, orderId) => {
    expect(await findOrderById(payFor(sb).orders, orderId)).toBeUndefined();
  });
});

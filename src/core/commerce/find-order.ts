import { PayError } from '../errors.js';
import type { Orders } from './index.js';
import { ENTITY_ID_TEXT } from './orders.js';
import type { CommerceOrder } from './schemas.js';
import { isOrderNumber } from './search.js';

/**
 * The order a payment names: by increment_id (what minting from an order records), else, for a plain
 * number, by entity_id. Undefined when the platform has neither, or cannot: a payment service echoes order
 * ids no order number has (' 1001', 300 characters), and a search for one would be refused. `signal` stops the look-up.
 */
export async function findOrderById(orders: Pick<Orders, 'search' | 'get'>, orderId: string, signal?: AbortSignal): Promise<CommerceOrder | undefined> {
  if (!isOrderNumber(orderId)) return undefined;
  const [byNumber] = (await orders.search({ incrementId: orderId, pageSize: 1, signal })).items;
  if (byNumber || !ENTITY_ID_TEXT.test(orderId)) return byNumber;
  try {
    return await orders.get(Number(orderId), { signal });
  } catch (error) {
    if (error instanceof PayError && error.code === 'ORDER_NOT_FOUND') return undefined;
    throw error;
  }
}

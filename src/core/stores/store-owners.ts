import { PayError } from '../errors.js';
import type { StoreOptions } from './index.js';

/**
 * Marks stores that share one keyspace, such as the Redis stores of one client and prefix: the value is an
 * object standing for that keyspace. A store without it stands for itself.
 */
export const STORE_KEYSPACE = Symbol.for('paywidget-server.storeKeyspace');

/** Whose payments a Pay instance handles: keys hold payment ids, event ids and order numbers, which another merchant or shop can have too. */
export interface StoreOwner {
  merchantId: string | undefined;
  commerceUrl: string | undefined;
}

const owners = new WeakMap<object, StoreOwner>();

/**
 * Refuses (CONFIG_INVALID) stores that another Pay instance of this process uses for another merchant or
 * commerce store: one shop's order 000000010 would be refused as paid by the other's payment, and one's
 * webhook taken for a duplicate of the other's. Only what both instances name is compared.
 */
export function claimStores(stores: StoreOptions | undefined, owner: StoreOwner): void {
  for (const [name, store] of Object.entries(stores ?? {})) {
    if (typeof store !== 'object' || store === null) continue;
    const keyspace = (store as { [STORE_KEYSPACE]?: object })[STORE_KEYSPACE] ?? store;
    const first = owners.get(keyspace);
    if (!first) {
      owners.set(keyspace, owner);
      continue;
    }
    const other = differ(first.merchantId, owner.merchantId) ? 'merchant' : differ(first.commerceUrl, owner.commerceUrl) ? 'commerce store' : undefined;
    if (other === undefined) continue;
    throw new PayError('CONFIG_INVALID', `paywidget-server configuration: stores.${name} is already used by a Pay instance for another ${other}. Their payments, webhook event ids and order numbers would mix (one shop's order refused as paid by the other's payment): give each its own stores, with redisStores(redis, { prefix: 'paywidget:<shop>:' }) or new in-memory stores.`, {
      details: { options: [`stores.${name}`] },
    });
  }
}

const differ = (a: string | undefined, b: string | undefined) => a !== undefined && b !== undefined && a !== b;

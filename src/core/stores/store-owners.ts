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
 * webhook taken for a duplicate of the other's. Only what both instances name is compared; the admin-token
 * store is meant to be shared.
 */
export function claimStores(stores: StoreOptions | undefined, owner: StoreOwner): void {
  for (const [name, store] of Object.entries(stores ?? {})) {
    // Admin tokens are keyed by platform and user, and Magento counts refused logins per user: shops and merchants
    // logging in as one user must share them, or each would have its own refusal chain and together lock the account.
    if (name === 'adminTokens') continue;
    if (typeof store !== 'object' || store === null) continue;
    const keyspace = (store as { [STORE_KEYSPACE]?: object })[STORE_KEYSPACE] ?? store;
    const first = owners.get(keyspace);
    const other = !first ? undefined : differ(first.merchantId, owner.merchantId) ? 'merchant' : differ(first.commerceUrl, owner.commerceUrl) ? 'commerce store' : undefined;
    if (other === undefined) {
      // What the first instance left unnamed (one built without secrets at `next build`, an orders-only
      // one) is taken from the first that names it: else any two merchants would pass, each matched only against it.
      owners.set(keyspace, { merchantId: first?.merchantId ?? owner.merchantId, commerceUrl: first?.commerceUrl ?? owner.commerceUrl });
      continue;
    }
    const prefix = (keyspace as { prefix?: unknown }).prefix;
    const where = typeof prefix === 'string' ? ` (Redis prefix '${prefix}')` : '';
    const [theirs, ours] = other === 'merchant' ? [first!.merchantId, owner.merchantId] : [first!.commerceUrl, owner.commerceUrl];
    throw new PayError('CONFIG_INVALID', `paywidget-server configuration: stores.${name}${where} is already used in this process by a Pay instance for ${other} ${theirs}; this one is for ${ours}. Their payments, webhook event ids and order numbers would mix (one shop's order refused as paid by the other's payment): give each its own stores, with redisStores(redis, { prefix: 'paywidget:<shop>:' }) or new in-memory stores. The stores stay tied to the first until the process restarts (restart a dev server after changing the merchant id).`, {
      details: { options: [`stores.${name}`], ...(typeof prefix === 'string' ? { prefix } : {}) },
    });
  }
}

const differ = (a: string | undefined, b: string | undefined) => a !== undefined && b !== undefined && a !== b;

import { missingOptions, type CommerceConfig, type HttpPolicy } from '../config.js';
import { MemoryAdminTokenStore, type AdminTokenStore } from '../stores/admin-token-store.js';
import { MemoryCheckpointStore, type CheckpointStore } from '../stores/checkpoint-store.js';
import type { Logger } from '../types.js';
import { CommerceClient } from './client.js';
import { OrderReader, type OrderIterateOptions } from './orders.js';
import type { CommerceOrder, CommerceSearchResult } from './schemas.js';
import type { OrderSearch } from './search.js';
import { syncOrders, type OrderSyncOptions, type OrderSyncSummary } from './sync.js';
import { AdminTokens } from './token.js';

export { CommerceError, type MagentoErrorBody } from './errors.js';
export { checkoutForOrder, checkoutFromOrder, orderCheckoutResolver } from './checkout.js';
export { formatCommerceDate, type OrderFilter, type OrderSearch } from './search.js';
export type { OrderIterateOptions } from './orders.js';
export type { OrderSyncOptions, OrderSyncProgress, OrderSyncSummary } from './sync.js';
export type {
  CommerceAddress, CommerceOrder, CommerceOrderItem, CommercePayment, CommerceSearchCriteria, CommerceSearchResult, CommerceStatusHistory,
} from './schemas.js';

/** `pay.orders`: the merchant's orders on the commerce platform. */
export interface Orders {
  /** One order by `entity_id`; ORDER_NOT_FOUND (404) when there is none. `signal` stops the wait (the login too). */
  get(entityId: number | string, options?: { signal?: AbortSignal | undefined }): Promise<CommerceOrder>;
  /** One page of a search (100 orders unless pageSize says otherwise), sorted by entity_id ascending, its echo checked against what was sent. */
  search(query?: OrderSearch): Promise<CommerceSearchResult>;
  /** Every matching order, entity_id ascending, across pages fetched a few at a time. */
  iterate(options?: OrderIterateOptions): AsyncIterable<CommerceOrder>;
  /** Incremental, resumable delivery of every matching order (see OrderSyncOptions). */
  sync(options: OrderSyncOptions): Promise<OrderSyncSummary>;
}

export interface OrdersDeps {
  http: HttpPolicy;
  logger: Logger;
  now?: (() => number) | undefined;
  stores?: { checkpoints?: CheckpointStore | undefined; adminTokens?: AdminTokenStore | undefined } | undefined;
}

/** The orders API over one commerce configuration; createPay builds it, and so does the CLI (no payment options needed). */
export function createOrders(config: CommerceConfig, deps: OrdersDeps): Orders {
  const tokens = new AdminTokens({ config, http: deps.http, logger: deps.logger, now: deps.now, store: deps.stores?.adminTokens ?? new MemoryAdminTokenStore({ now: deps.now }) });
  const reader = new OrderReader(new CommerceClient({ config, http: deps.http, logger: deps.logger, tokens }), deps.logger);
  const checkpoints = deps.stores?.checkpoints ?? new MemoryCheckpointStore();
  return {
    get: (entityId, options) => reader.get(entityId, options),
    search: (query) => reader.search(query),
    iterate: (options) => reader.iterate(options),
    sync: (options) => syncOrders(reader, checkpoints, { logger: deps.logger, now: deps.now ?? Date.now, source: config.url }, options),
  };
}

/** `pay.orders` without a (complete) commerce platform: every call names what to configure. */
export function unconfiguredOrders(commerceMissing: string[]): Orders {
  const missing = () => missingOptions(commerceMissing, 'to read orders (pay.orders)');
  return {
    get: async () => {
      throw missing();
    },
    search: async () => {
      throw missing();
    },
    iterate: () => {
      throw missing();
    },
    sync: async () => {
      throw missing();
    },
  };
}

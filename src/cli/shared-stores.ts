import type { StoreOptions } from '../core/stores/index.js';

/**
 * The stores a CLI run shares with the merchant's servers: in Redis when REDIS_URL is set (the ledger
 * they record webhooks and polls in), otherwise none (in memory, empty, for this run only).
 * ioredis is an optional peer dependency, loaded only then.
 */
export async function sharedStores(env: Record<string, string | undefined>): Promise<{ stores: StoreOptions | undefined; close(): Promise<void> }> {
  const url = env.REDIS_URL;
  if (!url) return { stores: undefined, close: async () => {} };
  const [{ Redis }, { redisStores }] = await Promise.all([import('ioredis'), import('../stores/redis/index.js')]);
  const client = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true });
  await client.connect();
  return { stores: redisStores(client, { prefix: env.PAYWIDGET_REDIS_PREFIX }), close: async () => void (await client.quit()) };
}

/**
 * `paywidget-server/redis`: the shared state of several instances (processes behind a load balancer,
 * serverless functions) in one Redis, for `createPay({ stores: redisStores(client) })`.
 *
 *   import { Redis } from 'ioredis';
 *   const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
 *   redis.on('error', (err) => console.warn('redis:', err.message));
 *   const pay = createPay({ stores: redisStores(redis) });
 *
 * Works with ioredis 5 and with the official `redis` client (v4 and later); neither is imported here. Either
 * needs an `error` listener: node-redis's error on a dropped connection would otherwise end the process.
 */
import type { StoreOptions } from '../../core/stores/index.js';
import { MAX_TIMER_MS } from '../../core/max-timer.js';
import { STORE_KEYSPACE } from '../../core/stores/store-owners.js';
import { RedisAdminTokenStore } from './admin-token-store.js';
import { RedisCheckpointStore } from './checkpoint-store.js';
import { RedisClaimStore } from './claim-store.js';
import { isClusterClient, RedisCommands, type RedisClientLike } from './client.js';
import { keyspaceOf } from './keyspace.js';
import { RedisLedgerStore } from './ledger-store.js';

export interface RedisStoresOptions {
  /**
   * Put before every key, so several applications (or environments) can share one Redis; `paywidget:` by
   * default, `{paywidget}:` on a Cluster (ioredis' Cluster, node-redis' createCluster()). On a Cluster it needs a hash tag (`{…}`): the scripts
   * touch several keys at once, and those must share a slot.
   */
  prefix?: string | undefined;
  /**
   * How long a command may take before the store gives up on it, in ms (2,000 by default; `false`: never).
   * A command that fails makes the webhook route answer 503 (the sender retries), so a store must not
   * wait for a client that queues commands while it reconnects. Configure the client to fail fast too
   * (ioredis: `enableOfflineQueue: false, maxRetriesPerRequest: 0`; node-redis: `disableOfflineQueue: true`).
   */
  commandTimeoutMs?: number | false | undefined;
}

/** Every store createPay takes, all in one Redis. */
export interface RedisStores extends Required<StoreOptions> {
  claims: RedisClaimStore;
  ledger: RedisLedgerStore;
  adminTokens: RedisAdminTokenStore;
  checkpoints: RedisCheckpointStore;
}

/** The prefix of every key when `redisStores` is given none (`{paywidget}:` on a Cluster). */
export const DEFAULT_REDIS_PREFIX = 'paywidget:';
/** The default on a Cluster: the hash tag puts every key of the library in one slot. */
export const DEFAULT_CLUSTER_PREFIX = '{paywidget}:';
const DEFAULT_COMMAND_TIMEOUT_MS = 2_000;

/**
 * The webhook claims, the payment ledger, the commerce admin token (with its shared refresh lock) and
 * the sync checkpoints, in the Redis behind `client`. The client stays the caller's: connect it, and
 * `quit()` it on shutdown.
 */
export function redisStores(client: RedisClientLike, options: RedisStoresOptions = {}): RedisStores {
  const cluster = isClusterClient(client);
  const prefix = options.prefix ?? (cluster ? DEFAULT_CLUSTER_PREFIX : DEFAULT_REDIS_PREFIX);
  const timeout = options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  if (typeof prefix !== 'string') throw new TypeError('redisStores: prefix must be a string.');
  // Redis hashes the text between the key's first '{' and the first '}' after it, when that is not empty.
  if (cluster && !/^[^{]*\{[^}]+\}/.test(prefix)) {
    throw new TypeError(`redisStores: on a Redis Cluster the prefix needs a hash tag, e.g. '{${prefix.replace(/:$/, '')}}:', so that the keys each script touches share a slot (got '${prefix}').`);
  }
  // Past 2^31 - 1 Node clamps the timer to 1 ms, and every command would time out at once: false means "never".
  if (timeout !== false && !(Number.isFinite(timeout) && timeout > 0 && timeout <= MAX_TIMER_MS)) {
    throw new TypeError(`redisStores: commandTimeoutMs must be a positive number of milliseconds up to ${MAX_TIMER_MS}, or false for none.`);
  }
  const redis = new RedisCommands(client, timeout);
  const stores = {
    claims: new RedisClaimStore(redis, prefix),
    ledger: new RedisLedgerStore(redis, prefix),
    adminTokens: new RedisAdminTokenStore(redis, prefix),
    checkpoints: new RedisCheckpointStore(redis, prefix),
  };
  // Two calls with one client (or two clients of one server and database) and one prefix make stores of one
  // keyspace: createPay refuses it to two merchants.
  const keyspace = keyspaceOf(client, prefix);
  for (const store of Object.values(stores)) Object.defineProperty(store, STORE_KEYSPACE, { value: keyspace });
  return stores;
}

export { RedisClaimStore } from './claim-store.js';
export { RedisLedgerStore } from './ledger-store.js';
export { RedisAdminTokenStore } from './admin-token-store.js';
export { RedisCheckpointStore } from './checkpoint-store.js';
export { RedisCommands, RedisTimeoutError, type RedisClientLike, type CallRedisClient, type SendCommandRedisClient, type ClusterSendCommandRedisClient } from './client.js';

/**
 * The Redis stores through node-redis's Sentinel client (`createSentinel()`), whose `sendCommand` takes
 * whether a command only reads before its arguments: the same contracts as every other client, on a real
 * redis-server watched by a real Sentinel.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { createSentinel } from 'redis';
import { afterAll, beforeAll } from 'vitest';
import { redisStores, type RedisClientLike } from 'paywidget-server/redis';
import { advanceKeys, connectedRedis, startRedisServer, startSentinel, type RedisServer } from '../../helpers/redis-server.js';
import { claimStoreContract } from '../../core/stores/claim-store-contract.js';
import { adminTokenStoreContract } from '../../core/stores/admin-token-store-contract.js';
import { ledgerStoreContract } from '../../core/stores/ledger-store-contract.js';
import { checkpointStoreContract } from '../../core/stores/checkpoint-store-contract.js';

let master: RedisServer;
let sentinel: Awaited<ReturnType<typeof startSentinel>>;
let client: ReturnType<typeof createSentinel>;
let direct: Redis;

beforeAll(async () => {
  master = await startRedisServer();
  sentinel = await startSentinel(master);
  client = createSentinel({ name: 'mymaster', sentinelRootNodes: [{ host: '127.0.0.1', port: sentinel.port }] });
  client.on('error', () => {});
  await client.connect();
  direct = await connectedRedis(master.url);
});

afterAll(async () => {
  // Each stopped whatever became of the others, so that no server outlives the tests.
  await client?.close().catch(() => {});
  direct?.disconnect();
  await Promise.allSettled([sentinel?.stop(), master?.stop()]);
});

function fresh() {
  const prefix = `test:${randomUUID()}:`;
  return { stores: redisStores(client as unknown as RedisClientLike, { prefix }), prefix };
}

claimStoreContract('RedisClaimStore (node-redis Sentinel)', () => {
  const { stores, prefix } = fresh();
  return { store: stores.claims, advance: (ms) => advanceKeys(direct, prefix, ms) };
});
ledgerStoreContract('RedisLedgerStore (node-redis Sentinel)', () => fresh().stores.ledger);
adminTokenStoreContract('RedisAdminTokenStore (node-redis Sentinel)', () => {
  const { stores, prefix } = fresh();
  return { store: stores.adminTokens, advance: (ms) => advanceKeys(direct, prefix, ms) };
});
checkpointStoreContract('RedisCheckpointStore (node-redis Sentinel)', () => {
  const { stores, prefix } = fresh();
  return { store: stores.checkpoints, advance: (ms) => advanceKeys(direct, prefix, ms) };
});

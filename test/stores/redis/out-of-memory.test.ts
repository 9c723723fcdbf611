/**
 * Redis full under `noeviction` (what the README asks for) while a webhook's handlers run: a new event
 * is refused (503, the sender retries), but the running one keeps its lease and gets its done mark, so a
 * duplicate sent after memory is freed is still a duplicate. Starts its own redis-server: it sets maxmemory.
 */
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { redisStores } from 'paywidget-server/redis';
import { connectedRedis, startRedisServer, type RedisServer } from '../../helpers/redis-server.js';

let server: RedisServer;
let redis: Redis;
beforeAll(async () => {
  server = await startRedisServer();
  redis = await connectedRedis(server.url);
});
afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
});

const usedMemory = async () => Number(/used_memory:(\d+)/.exec(String(await redis.call('INFO', 'memory')))![1]);

it('renews the lease and marks the event done past maxmemory; a new event is refused until memory is freed', async () => {
  const stores = redisStores(redis, { prefix: 'oom:' });
  const running = await stores.claims.claim('evt_running', 60_000);
  expect(running.state).toBe('claimed');
  const token = (running as { token: string }).token;

  await redis.call('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
  await redis.call('CONFIG', 'SET', 'maxmemory', String(Math.max(1, (await usedMemory()) - 100_000)));
  try {
    // Redis is past its limit: a claim would add a key, and is refused as out of memory.
    await expect(stores.claims.claim('evt_new', 60_000)).rejects.toThrow(/OOM/);
    await expect(stores.claims.renew!('evt_running', token, 60_000)).resolves.toBe(true);
    await expect(stores.claims.complete('evt_running', token, 3 * 86_400_000)).resolves.toBe(true);
  } finally {
    await redis.call('CONFIG', 'SET', 'maxmemory', '0');
  }
  expect(await stores.claims.claim('evt_running', 60_000)).toEqual({ state: 'done' });
  expect((await stores.claims.claim('evt_new', 60_000)).state).toBe('claimed');
});

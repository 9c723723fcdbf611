/**
 * The Redis stores: the webhook route's throughput with its claims in Redis next to the same route
 * with the in-memory stores, and the round trip of one claim next to a bare PING on the same
 * connection. Starts its own redis-server (no persistence) on a free port.
 */
import { Redis } from 'ioredis';
import { MemoryClaimStore } from '../src/index.js';
import { redisStores } from '../src/stores/redis/index.js';
import { deletePrefix, useRedisUrl } from '../test/helpers/redis-server.js';
import { printTable, type Figure } from './lib.js';
import { compare } from './webhook-throughput.js';

const ROUNDS = 7;
const CALLS = 3_000;

/** Median microseconds per sequential call of `fn` (each awaited before the next), after a warm-up. */
async function microsPerCall(fn: (i: number) => Promise<unknown>): Promise<number> {
  let n = 0;
  for (let i = 0; i < CALLS / 4; i++) await fn(n++);
  const samples: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < CALLS; i++) await fn(n++);
    samples.push(Number(process.hrtime.bigint() - start) / 1000 / CALLS);
  }
  return samples.sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;
}

/** Every key the bench writes starts with it (the bench server's too), and is deleted after: REDIS_URL may be a Redis of your own. */
const KEY_PREFIX = 'paywidget-bench:';

export async function benchRedis(): Promise<void> {
  // REDIS_URL when set (a Redis of your own), else a redis-server started for the run.
  const server = await useRedisUrl();
  const redis = new Redis(server.url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true });
  const urlBefore = process.env.REDIS_URL;
  try {
    await redis.connect();
    const prefix = `${KEY_PREFIX}rtt:`;
    const { claims } = redisStores(redis, { prefix });
    const memory = new MemoryClaimStore();
    const ping = await microsPerCall(() => redis.ping());
    const claim = await microsPerCall((i) => claims.claim(`evt:${i}`, 60_000));
    const claimComplete = await microsPerCall(async (i) => {
      const result = await claims.claim(`evt:c${i}`, 60_000);
      if (result.state === 'claimed') await claims.complete(`evt:c${i}`, result.token, 60_000);
    });
    const memoryClaim = await microsPerCall(async (i) => memory.claim(`evt:${i}`, 60_000));
    printTable(`Claim round trip (sequential, median of ${ROUNDS} × ${CALLS} calls, redis-server on 127.0.0.1)`, [
      { name: 'redis PING', unit: 'µs per call', value: ping },
      { name: 'RedisClaimStore.claim', unit: 'µs per call', value: claim, reference: 'redis PING' },
      { name: 'claim + complete', unit: 'µs per call', value: claimComplete, reference: 'redis PING' },
      { name: 'MemoryClaimStore.claim', unit: 'µs per call', value: memoryClaim, reference: 'redis PING' },
    ]);

    process.env.REDIS_URL = server.url; // read by the bench server of the express-redis variant
    const [inMemory, withRedis, rounds] = await compare('express-library', 'express-redis');
    const figures: Figure[] = [
      { name: 'express payMiddleware, memory stores', unit: 'req/s', value: inMemory },
      { name: 'express payMiddleware, Redis stores', unit: 'req/s', value: withRedis, reference: 'express payMiddleware, memory stores', rounds },
    ];
    printTable('Webhook route throughput with the Redis stores (50 connections, alternating rounds, distinct signed deliveries; each one binds its signature, then claims and completes its event id)', figures);
  } finally {
    await deletePrefix(redis, KEY_PREFIX).catch(() => {});
    if (urlBefore === undefined) delete process.env.REDIS_URL;
    else process.env.REDIS_URL = urlBefore;
    redis.disconnect();
    await server.done();
  }
}

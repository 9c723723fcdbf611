/**
 * Three processes of the Express example share one Redis. 5,000 signed deliveries, 30% of them
 * duplicates, 64 in flight, each attempt sent to an instance picked at random; 5% of the events fail
 * their first attempt on purpose and the sender retries. Every event is processed exactly once.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisStores } from 'paywidget-server/redis';
import { startSandbox, type Sandbox } from 'paywidget-server/sandbox';
import { connectedRedis, deletePrefix, useRedisUrl } from '../../helpers/redis-server.js';
import { plan, readBooks, sendAll, startFleet, type Fleet } from './fixtures/fleet.js';

let url: string;
let done: () => Promise<void>;
let redis: Redis;
let sandbox: Sandbox;
let fleet: Fleet | undefined;
const prefix = `test:${randomUUID()}:`;

beforeAll(async () => {
  ({ url, done } = await useRedisUrl());
  redis = await connectedRedis(url);
  sandbox = await startSandbox();
});

afterAll(async () => {
  await fleet?.stop();
  await deletePrefix(redis, prefix);
  redis.disconnect();
  await sandbox?.close();
  await done?.();
});

describe('three Express instances sharing one Redis', () => {
  it('5,000 deliveries with 30% duplicates and 5% failed first attempts: every event processed exactly once', async () => {
    fleet = await startFleet(3, {
      REDIS_URL: url, REDIS_PREFIX: prefix,
      PAY_API_URL: sandbox.paymentUrl, PAY_MERCHANT_ID: sandbox.merchantId, PAY_MERCHANT_API_KEY: sandbox.apiKey, PAY_WEBHOOK_SECRET: sandbox.webhookSecret,
    });
    const runId = randomUUID().slice(0, 8);
    const { deliveries, events, failFirst } = plan(5_000, 0.3, 0.05, sandbox.webhookSecret, runId);
    const started = performance.now();
    const stats = await sendAll(deliveries, fleet.instances.map((i) => i.port), { concurrency: 64 });
    const seconds = (performance.now() - started) / 1000;
    const books = readBooks(fleet.instances);

    const twice = [...books.processed.values()].filter((n) => n > 1).length;
    const lost = events.filter((id) => !books.processed.has(id)).length;
    console.log([
      'multi-process run (3 instances, one Redis):',
      `  deliveries sent ${stats.sent} (duplicates ${deliveries.filter((d) => d.duplicate).length}, unique events ${events.length}), 64 in flight, ${seconds.toFixed(1)} s (${Math.round(stats.attempts / seconds)} requests/s)`,
      `  failures injected ${books.injected} (events marked ${failFirst}); retries ${stats.retries}; answers ${JSON.stringify(stats.byStatus)}; answered as duplicate ${stats.answeredDuplicate}`,
      `  attempts per instance ${stats.perInstanceAttempts.join(' / ')}; processed per instance ${books.perInstance.join(' / ')}`,
      `  unique processed ${books.processed.size}, twice-processed ${twice}, lost ${lost}`,
    ].join('\n'));

    expect(books.injected).toBe(failFirst);
    expect(stats.byStatus['500']).toBe(failFirst);
    expect(twice).toBe(0);
    expect(lost).toBe(0);
    expect(books.processed.size).toBe(events.length);
    expect(books.perInstance.every((n) => n > 0)).toBe(true);

    // The payment events reached the one shared ledger.
    const ledger = redisStores(redis, { prefix }).ledger;
    const confirmed = [];
    for await (const entry of ledger.list({ outcome: 'confirmed' })) confirmed.push(entry);
    expect(confirmed).toHaveLength(Math.ceil(events.length / 2));
  }, 90_000);
});

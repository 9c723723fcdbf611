/**
 * Redis dies in the middle of a delivery run (SIGKILL) and comes back on the same port 1.5 s later.
 * The instances answer 503 meanwhile, the sender retries, and every event ends processed exactly once.
 *
 * This Redis keeps an append-only file fsynced on every write, so the claims completed before the
 * crash survive it and a duplicate sent afterwards is still recognised. Without persistence a
 * restarted Redis forgets them: nothing is lost and nothing in flight runs twice, but an event
 * completed before the restart would run again if it were redelivered after it (see the README).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from 'paywidget-server/sandbox';
import { startRedisServer, type RedisServer } from '../../helpers/redis-server.js';
import { plan, readBooks, sendAll, startFleet, type Fleet } from './fixtures/fleet.js';

const OUTAGE_MS = 1_500;

// Starts its own redis-server (even when REDIS_URL is set): it must stop and restart it.
describe('three instances while Redis crashes and restarts', () => {
  let server: RedisServer;
  let sandbox: Sandbox;
  let fleet: Fleet | undefined;

  beforeAll(async () => {
    server = await startRedisServer({ appendOnly: true });
    sandbox = await startSandbox();
  });

  afterAll(async () => {
    await fleet?.stop();
    await server?.stop();
    await sandbox?.close();
  });

  it('503 during the outage, then every event processed exactly once', async () => {
    fleet = await startFleet(3, {
      REDIS_URL: server.url, REDIS_PREFIX: 'outage:', LEASE_MS: '8000',
      PAY_API_URL: sandbox.paymentUrl, PAY_MERCHANT_ID: sandbox.merchantId, PAY_MERCHANT_API_KEY: sandbox.apiKey, PAY_WEBHOOK_SECRET: sandbox.webhookSecret,
    });
    const { deliveries, events, failFirst } = plan(4_000, 0.3, 0.05, sandbox.webhookSecret, randomUUID().slice(0, 8));
    let outage: Promise<void> | undefined;
    let outageAt = 0;
    const started = performance.now();
    const stats = await sendAll(deliveries, fleet.instances.map((i) => i.port), {
      concurrency: 64,
      onProgress: (finished) => {
        if (finished !== 1_200) return;
        outageAt = finished;
        outage = (async () => {
          await server.kill();
          await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
          await server.restart();
        })();
      },
    });
    await outage;
    const seconds = (performance.now() - started) / 1000;
    const books = readBooks(fleet.instances);

    const twice = [...books.processed.values()].filter((n) => n > 1).length;
    const lost = events.filter((id) => !books.processed.has(id)).length;
    console.log([
      `outage run (3 instances, Redis with AOF killed after ${outageAt} finished deliveries, back ${OUTAGE_MS} ms later):`,
      `  deliveries sent ${stats.sent} (duplicates ${deliveries.filter((d) => d.duplicate).length}, unique events ${events.length}), 64 in flight, ${seconds.toFixed(1)} s`,
      `  failures injected ${books.injected} (events marked ${failFirst}); retries ${stats.retries}; answers ${JSON.stringify(stats.byStatus)}; answered as duplicate ${stats.answeredDuplicate}`,
      `  processed per instance ${books.perInstance.join(' / ')}; unique processed ${books.processed.size}, twice-processed ${twice}, lost ${lost}`,
    ].join('\n'));

    expect(stats.byStatus['503']).toBeGreaterThan(0);
    expect(twice).toBe(0);
    expect(lost).toBe(0);
    expect(books.processed.size).toBe(events.length);
  }, 90_000);
});

/**
 * The Redis stores on a Redis Cluster (a real one-node cluster holding every slot): the scripts touch
 * several keys at once, which a Cluster allows only when they share a slot, so the prefix has a hash tag.
 */
import { once } from 'node:events';
import { Cluster } from 'ioredis';
import { createCluster } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisStores } from 'paywidget-server/redis';
import { startRedisServer, type RedisServer } from '../../helpers/redis-server.js';

let server: RedisServer;
let cluster: Cluster;
beforeAll(async () => {
  server = await startRedisServer({ cluster: true });
  cluster = new Cluster([{ host: '127.0.0.1', port: server.port }]);
  await once(cluster, 'ready');
});
afterAll(async () => {
  cluster?.disconnect();
  await server?.stop();
});

describe('redisStores on a Redis Cluster', () => {
  it('defaults to a hash-tagged prefix, so the ledger script (five keys) runs', async () => {
    const stores = redisStores(cluster);
    const { entry } = await stores.ledger.record({ paymentId: 'pay_cluster', status: 'succeeded', outcome: 'confirmed', source: 'webhook', at: Date.now(), orderId: '000000001' });
    expect(entry).toMatchObject({ paymentId: 'pay_cluster', outcome: 'confirmed' });
    expect((await stores.ledger.byOrder('000000001')).map((e) => e.paymentId)).toEqual(['pay_cluster']);
    expect((await stores.claims.claim('evt:cluster', 1_000)).state).toBe('claimed');
    expect(await cluster.exists('{paywidget}:ledger:pay:pay_cluster')).toBe(1);
  });

  it('works with a node-redis Cluster client too, whose commands are routed by their first key', async () => {
    const nodeRedis = createCluster({ rootNodes: [{ url: `redis://127.0.0.1:${server.port}` }] });
    nodeRedis.on('error', () => {});
    await nodeRedis.connect();
    try {
      expect(() => redisStores(nodeRedis, { prefix: 'shop:' })).toThrow(/needs a hash tag/);
      const stores = redisStores(nodeRedis);
      const { entry } = await stores.ledger.record({ paymentId: 'pay_node_redis', status: 'succeeded', outcome: 'confirmed', source: 'webhook', at: Date.now(), orderId: '000000002' });
      expect(entry).toMatchObject({ paymentId: 'pay_node_redis', outcome: 'confirmed' });
      expect((await stores.claims.claim('evt:node-redis', 1_000)).state).toBe('claimed');
      expect(await stores.checkpoints.get('node-redis')).toBeUndefined();
      expect(await cluster.exists('{paywidget}:ledger:pay:pay_node_redis')).toBe(1);
    } finally {
      await nodeRedis.close();
    }
  });

  it('refuses a prefix without a hash tag, saying which one would work', () => {
    expect(() => redisStores(cluster, { prefix: 'shop:' })).toThrow(/needs a hash tag, e\.g\. '\{shop\}:'/);
    expect(() => redisStores(cluster, { prefix: '{shop}:' })).not.toThrow();
    // Redis reads only the first '{…}', and an empty one means the whole key: a later tag does not count.
    expect(() => redisStores(cluster, { prefix: '{}{shop}:' })).toThrow(/needs a hash tag/);
    expect(() => redisStores(cluster, { prefix: 'a{b:{shop}:' })).not.toThrow(); // hashes 'b:{shop', one slot for all
  });
});

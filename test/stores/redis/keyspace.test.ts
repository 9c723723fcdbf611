/** Which clients and prefixes write to one keyspace: told from the client's options (and ioredis's SELECT), never by connecting. */
import { Redis, type RedisOptions } from 'ioredis';
import { createClient } from 'redis';
import { describe, expect, it } from 'vitest';
import { keyspaceOf } from '../../../src/stores/redis/keyspace.js';
import { connectedRedis, startRedisServer } from '../../helpers/redis-server.js';

const ioredis = (options: string | RedisOptions) => (typeof options === 'string' ? new Redis(options, { lazyConnect: true }) : new Redis({ ...options, lazyConnect: true }));

describe('keyspaceOf', () => {
  it('is one keyspace for clients of one server and database, from either client library, whatever the loopback name', () => {
    const one = keyspaceOf(ioredis('redis://127.0.0.1:6400/0'), 'p:');
    expect(keyspaceOf(ioredis({ port: 6400 }), 'p:')).toBe(one);
    expect(keyspaceOf(createClient({ url: 'redis://localhost:6400' }), 'p:')).toBe(one);
    expect(keyspaceOf(createClient({ socket: { port: 6400 } }), 'p:')).toBe(one);
    expect(keyspaceOf(createClient({ url: 'redis://localhost:6400/3' }), 'p:')).toBe(keyspaceOf(ioredis({ port: 6400, db: 3 }), 'p:'));
  });

  it('is another keyspace for another prefix, database, port or host', () => {
    const one = keyspaceOf(ioredis({ port: 6401 }), 'p:');
    expect(keyspaceOf(ioredis({ port: 6401 }), 'q:')).not.toBe(one);
    expect(keyspaceOf(ioredis({ port: 6401, db: 1 }), 'p:')).not.toBe(one);
    expect(keyspaceOf(ioredis({ port: 6402 }), 'p:')).not.toBe(one);
    expect(keyspaceOf(ioredis({ port: 6401, host: 'redis.internal' }), 'p:')).not.toBe(one);
    // ioredis's keyPrefix comes before every key: one client per shop, each with its own, writes apart.
    expect(keyspaceOf(ioredis({ port: 6401, keyPrefix: 'shop_a:' }), 'p:')).not.toBe(keyspaceOf(ioredis({ port: 6401, keyPrefix: 'shop_b:' }), 'p:'));
    expect(keyspaceOf(ioredis({ port: 6401, keyPrefix: 'shop_a:' }), 'p:')).toBe(keyspaceOf(ioredis({ port: 6401, keyPrefix: 'shop_a:' }), 'p:'));
    // Where the keys really start counts: 'shop_' + 'a:p:' writes where 'shop_a:' + 'p:' does.
    expect(keyspaceOf(ioredis({ port: 6401, keyPrefix: 'shop_' }), 'a:p:')).toBe(keyspaceOf(ioredis({ port: 6401, keyPrefix: 'shop_a:' }), 'p:'));
  });

  it('stands for the client alone where the server cannot be told (a Sentinel setup, an unknown client)', () => {
    const sentinel = () => ioredis({ sentinels: [{ host: '127.0.0.1', port: 26379 }], name: 'main' });
    const a = sentinel();
    expect(keyspaceOf(a, 'p:')).toBe(keyspaceOf(a, 'p:'));
    expect(keyspaceOf(sentinel(), 'p:')).not.toBe(keyspaceOf(a, 'p:'));
    const custom = { call: async () => null };
    expect(keyspaceOf(custom, 'p:')).toBe(keyspaceOf(custom, 'p:'));
    expect(keyspaceOf({ call: async () => null }, 'p:')).not.toBe(keyspaceOf(custom, 'p:'));
  });

  it('follows the database an ioredis client chose with SELECT after it connected', async () => {
    const server = await startRedisServer();
    const clients = await Promise.all([connectedRedis(server.url), connectedRedis(server.url)]);
    try {
      const [one, two] = clients as [Redis, Redis];
      await one.select(1);
      await two.select(2);
      const { port } = new URL(server.url);
      expect(keyspaceOf(one, 'p:')).not.toBe(keyspaceOf(two, 'p:'));
      expect(keyspaceOf(two, 'p:')).toBe(keyspaceOf(ioredis({ port: Number(port), db: 2 }), 'p:'));
    } finally {
      clients.forEach((client) => client.disconnect());
      await server.stop();
    }
  });
});

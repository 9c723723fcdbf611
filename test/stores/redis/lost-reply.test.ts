/**
 * A command that Redis applied but whose reply was lost with the connection. ioredis, by default,
 * sends it again after reconnecting: the claim or lock the first send took must count as taken,
 * not as someone else's (else the event waits out a lease nobody holds, and every instance logs in).
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, connect, type AddressInfo, type Server } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisStores } from 'paywidget-server/redis';
import { eventually } from '../../helpers/eventually.js';
import { connectedRedis, startRedisServer, type RedisServer } from '../../helpers/redis-server.js';

let server: RedisServer;
let admin: Redis;
let proxy: Server;
/** Set to drop the connection on the next reply from Redis, after Redis has applied the command. */
let dropNextReply = false;

beforeAll(async () => {
  server = await startRedisServer();
  admin = await connectedRedis(server.url);
  proxy = createServer((client) => {
    const upstream = connect(server.port, '127.0.0.1');
    client.pipe(upstream);
    upstream.on('data', (reply: Buffer) => {
      if (!dropNextReply) return void client.write(reply);
      dropNextReply = false;
      client.destroy();
      upstream.destroy();
    });
    client.on('error', () => {});
    upstream.on('error', () => {});
    client.on('close', () => upstream.destroy());
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
});
afterAll(async () => {
  proxy?.close();
  admin?.disconnect();
  await server?.stop();
});

describe('a command applied by Redis whose reply was lost, and that ioredis sends again', () => {
  it('counts the claim or lock it took as taken', async () => {
    // ioredis with its defaults: commands in flight when the connection drops are resent after the reconnect.
    const client = new Redis((proxy.address() as AddressInfo).port, '127.0.0.1');
    client.on('error', () => {});
    try {
      const prefix = `lost:${randomUUID()}:`;
      const stores = redisStores(client, { prefix });
      await stores.claims.claim('evt:warm', 1_000); // loads the scripts, so the dropped reply is the claim's own
      await stores.adminTokens.acquireRefreshLock('warm', 1_000);

      dropNextReply = true;
      const claim = await stores.claims.claim('evt:lost', 60_000);
      expect(claim.state).toBe('claimed');
      const token = (claim as { token: string }).token;
      expect(await admin.get(`${prefix}claim:evt:lost`)).toBe(token);
      expect(await stores.claims.complete('evt:lost', token, 60_000)).toBe(true);

      dropNextReply = true;
      const lock = await stores.adminTokens.acquireRefreshLock('lost', 30_000);
      expect(lock).toBeDefined();
      expect(await admin.get(`${prefix}admin-token-lock:lost`)).toBe(lock);
    } finally {
      client.disconnect();
    }
  });
});

describe('a command applied by Redis whose reply was lost, with the client options the README recommends (no resend)', () => {
  it('gives the claim or lock back once the client reconnects, so a retry need not wait out the lease', async () => {
    const client = new Redis((proxy.address() as AddressInfo).port, '127.0.0.1', { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    client.on('error', () => {});
    try {
      await once(client, 'ready');
      const prefix = `lost-no-resend:${randomUUID()}:`;
      const stores = redisStores(client, { prefix });
      const other = redisStores(admin, { prefix });
      await stores.claims.claim('evt:warm', 1_000); // loads the scripts, so the dropped reply is the claim's own
      await stores.checkpoints.acquireLock!('warm', 1_000);

      dropNextReply = true;
      await expect(stores.claims.claim('evt:lost', 60_000)).rejects.toThrow();
      // Redis ran it: the key is held under a token nobody knows of.
      expect(await admin.get(`${prefix}claim:evt:lost`)).toMatch(/^[0-9a-f-]{36}$/);
      await eventually(async () => (await admin.exists(`${prefix}claim:evt:lost`)) === 0 || undefined, 3_000, 'the lost claim given back');
      expect((await other.claims.claim('evt:lost', 60_000)).state).toBe('claimed');

      dropNextReply = true;
      await expect(stores.checkpoints.acquireLock!('sync', 60_000)).rejects.toThrow();
      await eventually(async () => (await other.checkpoints.acquireLock!('sync', 60_000)) ?? undefined, 3_000, 'the lost lock given back');
    } finally {
      client.disconnect();
    }
  });
});

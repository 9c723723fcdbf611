import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Cluster, Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { sharedStores } from '../../src/cli/shared-stores.js';
import type { PayError } from '../../src/core/errors.js';
import { redisStores } from '../../src/stores/redis/index.js';
import { deletePrefix, startRedisCluster, startRedisServer } from '../helpers/redis-server.js';

describe('sharedStores', () => {
  it('reads the ledger of a Redis Cluster through any of its nodes, not only the one holding its slot', async () => {
    const { nodes, stop } = await startRedisCluster();
    const servers = new Cluster([{ host: '127.0.0.1', port: nodes[1].port }]);
    try {
      // The servers' ledger, under the default prefix ({paywidget}:, whose slot is on the second node).
      const recorded = await redisStores(servers).ledger.record({ paymentId: 'pay_in_cluster', status: 'succeeded', outcome: 'confirmed', source: 'webhook', at: Date.now(), orderId: '000000009' });
      const shared = await sharedStores({ REDIS_URL: nodes[0].url });
      try {
        expect(await shared.stores!.ledger!.get('pay_in_cluster')).toEqual(recorded.entry);
      } finally {
        await shared.close();
      }
    } finally {
      servers.disconnect();
      await stop();
    }
  });

  it('leaves nothing running once Redis could not be reached, so the command exits at once', async () => {
    // In a process of its own, where no other timer runs: what is left after the failure is the library's.
    const script = `
      import { sharedStores } from './src/cli/shared-stores.ts';
      const failure = await sharedStores({ REDIS_URL: 'redis://127.0.0.1:1' }).then(() => 'connected', (error) => error.code);
      await new Promise((resolve) => setTimeout(resolve, 20)); // what is due at once has run
      console.log(JSON.stringify({ failure, timers: process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout') }));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: new URL('../..', import.meta.url), timeout: 20_000 });
    // ioredis's disconnect waited 2 s (its disconnectTimeout) for a close the failed connection had already had.
    expect(JSON.parse(stdout)).toEqual({ failure: 'STORE_UNAVAILABLE', timers: [] });
  });

  it('refuses a REDIS_URL ioredis would take for a socket path (and quote, password and all), naming no password', async () => {
    for (const url of ['valkey://default:Sup3rSecretPW@127.0.0.1:6391', 'redis:/:Sup3rSecretPW@127.0.0.1', 'tcp://u:Sup3rSecretPW@host:1', 'not a url Sup3rSecretPW', '//:Sup3rSecretPW@127.0.0.1:1']) {
      const error = await sharedStores({ REDIS_URL: url }).then(() => undefined, (e: unknown) => e as PayError);
      expect([url, error?.code]).toEqual([url, 'CONFIG_INVALID']);
      expect(error!.message).toMatch(/^REDIS_URL must be redis:\/\//);
      expect(error!.message).not.toContain('Sup3rSecretPW');
    }
  });

  it('names a socket path without its query, where ioredis reads a password', async () => {
    const error = await sharedStores({ REDIS_URL: '/tmp/paywidget-no-such.sock?password=Sup3rSecretPW' }).then(() => undefined, (e: unknown) => e as PayError);
    expect(error?.code).toBe('STORE_UNAVAILABLE');
    expect(error!.message).toContain('/tmp/paywidget-no-such.sock');
    expect(JSON.stringify(error) + String(error!.stack)).not.toContain('Sup3rSecretPW');
  });

  it('refuses a REDIS_URL whose password is not valid percent-encoding (CONFIG_INVALID saying how), not "URI malformed"', async () => {
    const error = await sharedStores({ REDIS_URL: 'redis://:pa%ss@127.0.0.1:1' }).then(() => undefined, (e: unknown) => e as PayError);
    expect(error?.code).toBe('CONFIG_INVALID');
    expect(error!.message).toContain('% as %25');
    expect(error!.message).not.toContain('pa%ss');
  });

  it('refuses a REDIS_URL whose database is not a number (CONFIG_INVALID), instead of a SELECT NaN failing with a stack trace', async () => {
    for (const url of ['redis://:pw@127.0.0.1:1/abc', 'redis://127.0.0.1:1/0/extra']) {
      const error = await sharedStores({ REDIS_URL: url }).then(() => undefined, (e: unknown) => e as PayError);
      expect(error?.code).toBe('CONFIG_INVALID');
      expect(error!.message).toContain('names its database by number');
      expect(error!.message).not.toContain('pw');
    }
  });

  it('reads REDIS_URL and PAYWIDGET_REDIS_PREFIX as the library reads its variables: trimmed, and empty as unset', async () => {
    // Empty: stores in memory, no Redis asked.
    expect((await sharedStores({ REDIS_URL: '' })).stores?.ledger).toBeUndefined();
    // A server of its own, even when REDIS_URL names a shared one: this writes under the default prefix.
    const redis = await startRedisServer();
    const client = new Redis(redis.url);
    try {
      for (const prefix of ['', '  ', 'paywidget:\n']) {
        const shared = await sharedStores({ REDIS_URL: ` ${redis.url}\n`, PAYWIDGET_REDIS_PREFIX: prefix });
        await shared.stores!.ledger!.record({ paymentId: 'pay_prefix', status: 'succeeded', outcome: 'confirmed', source: 'poll', at: Date.now() });
        await shared.close();
        // The servers' default prefix: the ledger they keep, not one of keys nobody else reads.
        const keys = await client.keys('*pay_prefix*');
        expect([JSON.stringify(prefix), keys.length > 0, keys.every((key) => key.startsWith('paywidget:ledger'))]).toEqual([JSON.stringify(prefix), true, true]);
        await deletePrefix(client, 'paywidget:ledger');
      }
    } finally {
      client.disconnect();
      await redis.stop();
    }
  });
});

/**
 * The Redis stores against a real redis-server (REDIS_URL, or one started here): the same contracts as
 * the in-memory stores, through ioredis and through the official `redis` client, plus what only a
 * shared store has to get right (tokens of other instances, timeouts, late replies).
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPay } from 'paywidget-server';
import { redisStores, RedisTimeoutError, type RedisClientLike } from 'paywidget-server/redis';
import { advanceKeys, connectedRedis, deletePrefix, useRedisUrl } from '../../helpers/redis-server.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { claimStoreContract } from '../../core/stores/claim-store-contract.js';
import { adminTokenStoreContract } from '../../core/stores/admin-token-store-contract.js';
import { ledgerStoreContract } from '../../core/stores/ledger-store-contract.js';
import { checkpointStoreContract } from '../../core/stores/checkpoint-store-contract.js';

let url: string;
let done: () => Promise<void>;
let ioredis: Redis;
let nodeRedis: ReturnType<typeof createClient>;
const runPrefix = `test:${randomUUID()}:`;

beforeAll(async () => {
  ({ url, done } = await useRedisUrl());
  ioredis = await connectedRedis(url);
  nodeRedis = createClient({ url, disableOfflineQueue: true });
  nodeRedis.on('error', () => {});
  await nodeRedis.connect();
});

afterAll(async () => {
  await deletePrefix(ioredis, runPrefix);
  ioredis?.disconnect();
  await nodeRedis?.close();
  await done?.();
});

/** Stores under a prefix of their own, so tests never see each other's keys. */
function fresh(client: () => RedisClientLike) {
  const prefix = `${runPrefix}${randomUUID()}:`;
  return { stores: redisStores(client(), { prefix }), prefix };
}

const clients: Array<[string, () => RedisClientLike]> = [
  ['ioredis', () => ioredis],
  ['node-redis', () => nodeRedis],
];

for (const [name, client] of clients) {
  claimStoreContract(`RedisClaimStore (${name})`, () => {
    const { stores, prefix } = fresh(client);
    return { store: stores.claims, advance: (ms) => advanceKeys(ioredis, prefix, ms) };
  });
  ledgerStoreContract(`RedisLedgerStore (${name})`, () => fresh(client).stores.ledger);
  adminTokenStoreContract(`RedisAdminTokenStore (${name})`, () => {
    const { stores, prefix } = fresh(client);
    return { store: stores.adminTokens, advance: (ms) => advanceKeys(ioredis, prefix, ms) };
  });
  checkpointStoreContract(`RedisCheckpointStore (${name})`, () => {
    const { stores, prefix } = fresh(client);
    return { store: stores.checkpoints, advance: (ms) => advanceKeys(ioredis, prefix, ms) };
  });

  describe(`redis stores (${name})`, () => {
    it('checkpoints: get / set, kept per name and prefix', async () => {
      const { stores } = fresh(client);
      expect(await stores.checkpoints.get('orders')).toBeUndefined();
      await stores.checkpoints.set('orders', '{"v":1}');
      await stores.checkpoints.set('other', 'x');
      expect(await stores.checkpoints.get('orders')).toBe('{"v":1}');
      expect(await fresh(client).stores.checkpoints.get('orders')).toBeUndefined();
    });

    it('refuses a ledger entry edited by hand, naming its key and the fix, instead of failing on nil or reading it as absent', async () => {
      const { stores, prefix } = fresh(client);
      const at = Date.now();
      await stores.ledger.record({ paymentId: 'p1', status: 'succeeded', outcome: 'confirmed', source: 'webhook', at, orderId: 'o1', amount: undefined, currency: undefined });
      const key = `${prefix}ledger:pay:p1`;
      const fix = 'holds a payment ledger entry paywidget-server did not write (paymentId, outcome, source, firstSeenAt or updatedAt is missing or wrong): restore those fields, or delete the key';
      await ioredis.hdel(key, 'outcome');
      // Recording failed inside the script on a nil, naming neither key nor fix.
      await expect(stores.ledger.record({ paymentId: 'p1', status: 'succeeded', outcome: 'confirmed', source: 'poll', at, orderId: undefined, amount: undefined, currency: undefined })).rejects.toThrow(`${key} ${fix}`);
      // Read as absent, a confirmed payment let the mint guard charge the order again.
      await ioredis.hset(key, 'outcome', 'confirmed');
      await ioredis.hdel(key, 'paymentId');
      await expect(stores.ledger.get('p1')).rejects.toThrow(`${key} ${fix}`);
      await expect(stores.ledger.byOrder('o1')).rejects.toThrow(fix);
    });

    it('a key of another type under the prefix (WRONGTYPE) is refused naming the key and the fix', async () => {
      const { stores, prefix } = fresh(client);
      const fix = 'holds another kind of value than paywidget-server keeps there (WRONGTYPE): something else writes under this prefix. Give redisStores a prefix of its own';
      await ioredis.hset(`${prefix}checkpoint:orders`, 'lastEntityId', '10');
      await expect(stores.checkpoints.get('orders')).rejects.toThrow(`The Redis key ${prefix}checkpoint:orders ${fix}`);
      await ioredis.set(`${prefix}ledger:order:o1`, 'not a set');
      await expect(stores.ledger.byOrder('o1')).rejects.toThrow(`The Redis key ${prefix}ledger:order:o1 ${fix}`);
      // Inside a script: every key it touches is named.
      await ioredis.hset(`${prefix}checkpoint-lock:orders`, 'token', 'x');
      await expect(stores.checkpoints.acquireLock('orders', 1_000)).rejects.toThrow(`${prefix}checkpoint-lock:orders`);
      await expect(stores.checkpoints.acquireLock('orders', 1_000)).rejects.toThrow(fix);
    });

    it('a claim key holding a value no instance writes, with no expiry, is refused naming the key instead of counting as in progress for ever', async () => {
      const { stores, prefix } = fresh(client);
      await ioredis.set(`${prefix}claim:evt:e1`, 'someone');
      await expect(stores.claims.claim('evt:e1', 15_000)).rejects.toThrow(`The Redis key ${prefix}claim:evt:e1 holds a value paywidget-server did not write, with no expiry (its claims always expire), so this delivery could never run. Delete the key`);
      // With an expiry it may be another instance's lease: in progress until it runs out.
      await ioredis.pexpire(`${prefix}claim:evt:e1`, 60_000);
      expect(await stores.claims.claim('evt:e1', 15_000)).toEqual({ state: 'in_progress' });
      await ioredis.set(`${prefix}claim:evt:e1`, 'done');
      expect(await stores.claims.claim('evt:e1', 15_000)).toEqual({ state: 'done' });
    });

    it('checkpoint locks: `checkpoint-lock:<name>`, expiring with the hold', async () => {
      const { stores, prefix } = fresh(client);
      const token = await stores.checkpoints.acquireLock('orders', 30_000);
      expect(await ioredis.get(`${prefix}checkpoint-lock:orders`)).toBe(token);
      expect(await ioredis.pttl(`${prefix}checkpoint-lock:orders`)).toBeGreaterThan(29_000);
      await stores.checkpoints.releaseLock('orders', token!);
      expect(await ioredis.exists(`${prefix}checkpoint-lock:orders`)).toBe(0);
    });

    it('checkpoint saves under a lock that was lost go nowhere: a late save never overwrites the run that took over', async () => {
      const { prefix } = fresh(client);
      // Two instances on one Redis, under one prefix.
      const a = redisStores(client(), { prefix }).checkpoints;
      const b = redisStores(client(), { prefix }).checkpoints;
      expect(await a.acquireLock('orders', 30_000)).toBeDefined();
      await a.set('orders', '{"lastEntityId":10}');
      // A's hold runs out while its connection stalls; B takes the checkpoint and moves it on.
      await advanceKeys(ioredis, prefix, 31_000);
      const tokenB = await b.acquireLock('orders', 30_000);
      await b.set('orders', '{"lastEntityId":5000}');
      await expect(a.set('orders', '{"lastEntityId":20}')).rejects.toMatchObject({ code: 'SYNC_IN_PROGRESS' });
      await b.releaseLock('orders', tokenB!);
      await expect(a.set('orders', '{"lastEntityId":20}')).rejects.toMatchObject({ code: 'SYNC_IN_PROGRESS' });
      expect(await b.get('orders')).toBe('{"lastEntityId":5000}');
    });

    it('admin tokens: cached for their TTL; one refresh lock at a time, freed only by its holder', async () => {
      const { stores, prefix } = fresh(client);
      const tokens = stores.adminTokens;
      expect(await tokens.get('k')).toBeUndefined();
      await tokens.set('k', 'tok-1', 60_000);
      expect(await tokens.get('k')).toBe('tok-1');
      expect(await ioredis.pttl(`${prefix}admin-token:k`)).toBeGreaterThan(59_000);

      const lock = await tokens.acquireRefreshLock('k', 10_000);
      expect(lock).toBeTypeOf('string');
      expect(await tokens.acquireRefreshLock('k', 10_000)).toBeUndefined();
      await tokens.releaseRefreshLock('k', 'someone-else');
      expect(await tokens.acquireRefreshLock('k', 10_000)).toBeUndefined();
      await tokens.releaseRefreshLock('k', lock!);
      expect(await tokens.acquireRefreshLock('k', 10_000)).toBeTypeOf('string');
    });
  });
}

describe('RedisClaimStore', () => {
  it('keeps claims under <prefix>claim:<key> with the lease, then the retention, as TTL', async () => {
    const { stores, prefix } = fresh(() => ioredis);
    const claim = await stores.claims.claim('evt:1', 30_000);
    if (claim.state !== 'claimed') throw new Error('not claimed');
    expect(await ioredis.get(`${prefix}claim:evt:1`)).toBe(claim.token);
    expect(await ioredis.pttl(`${prefix}claim:evt:1`)).toBeGreaterThan(29_000);
    await stores.claims.complete('evt:1', claim.token, 3 * 86_400_000);
    expect(await ioredis.get(`${prefix}claim:evt:1`)).toBe('done');
    expect(await ioredis.pttl(`${prefix}claim:evt:1`)).toBeGreaterThan(86_400_000);
  });

  it('two instances on one Redis: one claim wins; the other can neither release nor renew it', async () => {
    const prefix = `${runPrefix}${randomUUID()}:`;
    const a = redisStores(ioredis, { prefix }).claims;
    const b = redisStores(nodeRedis, { prefix }).claims;
    const [first, second] = await Promise.all([a.claim('evt:x', 10_000), b.claim('evt:x', 10_000)]);
    const winner = first.state === 'claimed' ? first : second;
    expect([first.state, second.state].sort()).toEqual(['claimed', 'in_progress']);
    if (winner.state !== 'claimed') throw new Error('no winner');
    expect(await b.release('evt:x', 'a-guess')).toBe(false);
    expect(await a.renew('evt:x', 'a-guess', 10_000)).toBe(false);
    expect(await a.claim('evt:x', 10_000)).toEqual({ state: 'in_progress' });
    expect(await b.complete('evt:x', winner.token, 10_000)).toBe(true); // the token is what counts, not the instance
    expect(await a.claim('evt:x', 10_000)).toEqual({ state: 'done' });
  });

  it('a command past commandTimeoutMs fails, and a claim that lands late is given back', async () => {
    const prefix = `${runPrefix}${randomUUID()}:`;
    let release = () => {};
    let gate = Promise.resolve();
    // A client whose replies can be held back, as a Redis that answers after the deadline.
    const slow: RedisClientLike = { call: async (command, ...args) => {
      const reply = ioredis.call(command, ...args);
      await gate;
      return reply;
    } };
    // The script loaded through a store with time to spare (a loaded CI machine can take 50 ms for that round trip).
    expect((await redisStores(slow, { prefix }).claims.claim('evt:warm', 60_000)).state).toBe('claimed');
    const claims = redisStores(slow, { prefix, commandTimeoutMs: 50 }).claims;
    gate = new Promise<void>((resolve) => (release = resolve));
    await expect(claims.claim('evt:late', 60_000)).rejects.toBeInstanceOf(RedisTimeoutError);
    expect(await ioredis.get(`${prefix}claim:evt:late`)).toMatch(/^[0-9a-f-]{36}$/);
    release();
    for (let i = 0; i < 50 && (await ioredis.exists(`${prefix}claim:evt:late`)); i++) await new Promise((r) => setTimeout(r, 10));
    expect(await ioredis.exists(`${prefix}claim:evt:late`)).toBe(0);
  });

  it('an unreachable Redis fails at once with a fail-fast client', async () => {
    const { Redis } = await import('ioredis');
    const down = new Redis('redis://127.0.0.1:1', { enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    down.on('error', () => {});
    // "At once" is observable in the error: the client's own refusal, not the store's RedisTimeoutError,
    // which is what a command queued while the client reconnects would end in after commandTimeoutMs.
    const error = await redisStores(down).claims.claim('evt:1', 1_000).then(
      () => { throw new Error('expected the claim to fail'); },
      (e: unknown) => e,
    );
    down.disconnect();
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(RedisTimeoutError);
    expect((error as Error).message).toMatch(/enableOfflineQueue options is false|Connection is closed/);
  });

  it('rejects a client it cannot drive, and bad options', () => {
    expect(() => redisStores({} as RedisClientLike)).toThrow(/ioredis client .* or a node-redis client/);
    // node-redis's legacy client answers by callback: every command would fail with a TypeError of its own.
    expect(() => redisStores(nodeRedis.legacy() as unknown as RedisClientLike)).toThrow(/answer by callback \(client\.legacy\(\), or createClient\(\{ legacyMode: true \}\) in node-redis 4\): pass the client itself/);
    expect(() => redisStores(ioredis, { commandTimeoutMs: 0 })).toThrow(/commandTimeoutMs/);
    expect(() => redisStores(ioredis, { commandTimeoutMs: 2 ** 31 })).toThrow(/up to 2147483647, or false for none/);
  });
});

describe('RedisLedgerStore', () => {
  it('lists past one page, oldest first, and skips entries whose outcome changed since the listing began', async () => {
    const ledger = fresh(() => ioredis).stores.ledger;
    for (let i = 0; i < 450; i++) await ledger.record({ paymentId: `p${i}`, status: 'pending', outcome: 'unresolved', source: 'poll', at: 1_000 + i });
    const seen: string[] = [];
    for await (const entry of ledger.list({ outcome: 'unresolved' })) {
      seen.push(entry.paymentId);
      if (entry.paymentId === 'p0') await ledger.record({ paymentId: 'p300', status: 'succeeded', outcome: 'confirmed', source: 'webhook', at: 5_000 });
    }
    expect(seen).toHaveLength(449);
    expect(seen.slice(0, 3)).toEqual(['p0', 'p1', 'p2']);
    expect(seen).not.toContain('p300');
  });

  it('reads its index a page at a time, so a long backlog (the first prune after a year) costs each command a page', async () => {
    const { prefix } = fresh(() => ioredis);
    let largestReply = 0;
    const measuring: RedisClientLike = {
      call: async (command: string, ...args: string[]) => {
        const reply = await ioredis.call(command, ...args);
        if (command === 'ZRANGEBYSCORE') largestReply = Math.max(largestReply, (reply as unknown[]).length);
        return reply;
      },
    };
    const ledger = redisStores(measuring, { prefix }).ledger;
    for (let batch = 0; batch < 10; batch++) {
      await Promise.all(Array.from({ length: 100 }, (_, i) => ledger.record({ paymentId: `p${batch * 100 + i}`, status: 'succeeded', outcome: 'confirmed', source: 'webhook', at: 1_000 + batch * 100 + i })));
    }
    const seen: string[] = [];
    for await (const entry of ledger.list({ outcome: 'confirmed', updatedTo: 5_000 })) seen.push(entry.paymentId);
    expect(seen).toEqual(Array.from({ length: 1_000 }, (_, i) => `p${i}`));
    // 200 ids and their scores at most: not the 1,000 ids of the whole range.
    expect(largestReply).toBeLessThanOrEqual(400);
  });

  it('forgets an entry whose order changed between reading it and removing it (filled in, or gone), and takes it out of its order', async () => {
    const prefix = `${runPrefix}${randomUUID()}:`;
    const ledger = redisStores(ioredis, { prefix }).ledger;
    let fillIn: (() => Promise<unknown>) | undefined;
    // A client that lets a webhook fill in the order id right after forget() read the hash.
    const racing: RedisClientLike = {
      call: async (command: string, ...args: string[]) => {
        const reply = await ioredis.call(command, ...args);
        if (command === 'HGET' && fillIn) await fillIn().finally(() => (fillIn = undefined));
        return reply;
      },
    };
    const forgetting = redisStores(racing, { prefix }).ledger;
    await ledger.record({ paymentId: 'p1', status: 'succeeded', outcome: 'confirmed', source: 'poll', at: 1_000 });
    fillIn = () => ledger.record({ paymentId: 'p1', status: 'succeeded', outcome: 'confirmed', source: 'webhook', at: 1_500, orderId: 'o9' });
    expect(await forgetting.forget('p1', { kind: 'settled', updatedTo: 2_000 })).toBe(true);
    expect(await ledger.get('p1')).toBeUndefined();
    expect(await ledger.byOrder('o9')).toEqual([]);
    expect(await ioredis.exists(`${prefix}ledger:order:o9`)).toBe(0);

    // The other way round: the entry read with an order is recorded again without one in between.
    await ledger.record({ paymentId: 'p2', status: 'succeeded', outcome: 'confirmed', source: 'poll', at: 1_000, orderId: 'o8' });
    fillIn = async () => {
      await ledger.forget('p2', { kind: 'settled', updatedTo: 2_000 });
      await ledger.record({ paymentId: 'p2', status: 'declined', outcome: 'failed', source: 'poll', at: 1_200 });
    };
    expect(await forgetting.forget('p2', { kind: 'settled', updatedTo: 2_000 })).toBe(true);
    expect(await ledger.get('p2')).toBeUndefined();
  });

  it('refuses to forget an entry whose order id does not read back as written (bytes that are not UTF-8), naming the key, instead of looping', async () => {
    const prefix = `${runPrefix}${randomUUID()}:`;
    const ledger = redisStores(ioredis, { prefix }).ledger;
    await ledger.record({ paymentId: 'p-bytes', status: 'succeeded', outcome: 'confirmed', source: 'poll', at: 1_000, orderId: 'o1' });
    // Written by another tool: the order id is read as U+FFFD, sent back as such, and never matches.
    await ioredis.hset(`${prefix}ledger:pay:p-bytes`, 'orderId', Buffer.from([0x6f, 0xff, 0x31]));
    await expect(ledger.forget('p-bytes', { kind: 'settled', updatedTo: 2_000 })).rejects.toThrow(`${prefix}ledger:pay:p-bytes holds an order id`);
  });

  it('lets pruneLedger remove an entry written before the index by last change existed (an older version, a rolling deploy)', async () => {
    const prefix = `${runPrefix}${randomUUID()}:`;
    const stores = redisStores(ioredis, { prefix });
    const old = Date.now() - 90 * 86_400_000;
    // As the version before the updatedAt index wrote it: the hash, the outcome set by first seen, the order's set.
    await ioredis.hset(`${prefix}ledger:pay:p_legacy`, { paymentId: 'p_legacy', outcome: 'confirmed', status: 'succeeded', source: 'webhook', firstSeenAt: String(old), updatedAt: String(old), orderId: 'o_legacy' });
    await ioredis.zadd(`${prefix}ledger:outcome:confirmed`, old, 'p_legacy');
    await ioredis.sadd(`${prefix}ledger:order:o_legacy`, 'p_legacy');
    // And one first seen as long ago, changed since: it stays.
    await stores.ledger.record({ paymentId: 'p_recent', status: 'declined', outcome: 'failed', source: 'poll', at: old });
    await stores.ledger.record({ paymentId: 'p_recent', status: 'succeeded', outcome: 'confirmed', source: 'webhook', at: Date.now() });
    const pay = createPay({ env: {}, logger: captureLogger(), payment: { apiUrl: 'http://127.0.0.1:9', merchantId: 'm', apiKey: 'k', webhookSecret: 's' }, stores });
    expect(await pay.payments.pruneLedger({ olderThanMs: 30 * 86_400_000 })).toEqual({ removed: 1, complete: true });
    expect(await stores.ledger.get('p_legacy')).toBeUndefined();
    expect(await stores.ledger.byOrder('o_legacy')).toEqual([]);
    expect(await stores.ledger.get('p_recent')).toMatchObject({ outcome: 'confirmed' });
  });

  it('leaves no key behind once every entry is forgotten, whatever outcomes it passed through', async () => {
    const { stores: { ledger }, prefix } = fresh(() => ioredis);
    await ledger.record({ paymentId: 'p1', status: 'pending', outcome: 'unresolved', source: 'poll', at: 1_000, orderId: 'o1' });
    await ledger.record({ paymentId: 'p1', status: 'declined', outcome: 'failed', source: 'poll', at: 1_500 });
    await ledger.record({ paymentId: 'p1', status: 'succeeded', outcome: 'confirmed', source: 'webhook', at: 2_000 });
    await ledger.record({ paymentId: 'p2', status: null, outcome: 'unresolved', source: 'poll', at: 1_000 });
    expect(await ledger.forget('p1', { kind: 'settled', updatedTo: 3_000 })).toBe(true);
    expect(await ledger.forget('p2', { kind: 'unknown' })).toBe(true);
    // An id left in the index of an outcome it had left would never be removed, and each listing would skip it again.
    expect(await ioredis.keys(`${prefix}*`)).toEqual([]);
  });

  it('keeps large amounts and timestamps exact, and statuses with any characters', async () => {
    const ledger = fresh(() => ioredis).stores.ledger;
    const at = 1_767_225_600_123;
    const { entry } = await ledger.record({ paymentId: 'p:1 é', status: 'requires action ✓', outcome: 'unresolved', source: 'webhook', at, orderId: '000000042', amount: Number.MAX_SAFE_INTEGER, currency: 'KWD' });
    expect(entry).toEqual({ paymentId: 'p:1 é', status: 'requires action ✓', outcome: 'unresolved', source: 'webhook', orderId: '000000042', amount: Number.MAX_SAFE_INTEGER, currency: 'KWD', firstSeenAt: at, updatedAt: at });
    expect(await ledger.get('p:1 é')).toEqual(entry);
    const nulled = await ledger.record({ paymentId: 'p:1 é', status: null, outcome: 'confirmed', source: 'poll', at: at + 1 });
    expect(nulled.entry.status).toBeNull();
  });
});

describe('Redis errors', () => {
  it('never carry the command arguments (the admin token) into logs', async () => {
    const { inspect } = await import('node:util');
    // As ioredis reports a refused command: the error holds the command and its arguments.
    const refusing: RedisClientLike = { call: async (command, ...args) => {
      throw Object.assign(new Error("OOM command not allowed when used memory > 'maxmemory'."), { command: { name: command.toLowerCase(), args } });
    } };
    const error = await redisStores(refusing).adminTokens.set('k', 'admin-token-secret', 60_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain('OOM command not allowed');
    expect((error as { command: unknown }).command).toEqual({ name: 'set' });
    // Logged as pino would: { err } with its own properties, message and stack.
    const logger = captureLogger();
    logger.error({ err: error }, 'redis command failed');
    expect(logger.lines).toHaveLength(1);
    expect(logger.text()).toContain('OOM command not allowed');
    expect(logger.text()).toContain('"command":{"name":"set"}');
    for (const text of [(error as Error).message, (error as Error).stack ?? '', inspect(error, { depth: 5 }), JSON.stringify(error), logger.text()]) {
      expect(text).not.toContain('admin-token-secret');
    }
  });
});

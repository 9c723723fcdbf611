import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { MemoryClaimStore } from 'paywidget-server';
import { claimStoreContract } from './claim-store-contract.js';

function withClock(start = 1_700_000_000_000) {
  let now = start;
  return {
    store: new MemoryClaimStore({ now: () => now }),
    advance: async (ms: number) => {
      now += ms;
    },
  };
}

claimStoreContract('MemoryClaimStore', () => withClock());
claimStoreContract('MemoryClaimStore with a clock starting at 0', () => withClock(0));

describe('MemoryClaimStore', () => {
  it('is bounded: beyond maxEntries the oldest written keys go', async () => {
    const store = new MemoryClaimStore({ maxEntries: 3 });
    for (const key of ['a', 'b', 'c', 'd']) await store.claim(key, 60_000);
    expect(store.size).toBe(3);
    expect((await store.claim('a', 60_000)).state).toBe('claimed');
    expect(await store.claim('d', 60_000)).toEqual({ state: 'in_progress' });
  });

  it('stays bounded through many evictions, keeping the newest keys; a key freed and taken again counts as new', async () => {
    const store = new MemoryClaimStore({ maxEntries: 50 });
    const first = await store.claim('first', 60_000);
    for (let i = 0; i < 48; i++) await store.claim(`a${i}`, 60_000);
    // Released and claimed again: written last now, so it outlives the keys written after its first claim.
    if (first.state === 'claimed') await store.release('first', first.token);
    await store.claim('first', 60_000);
    for (let i = 0; i < 49; i++) await store.claim(`b${i}`, 60_000);
    // 98 keys written into 50 places: the 48 written before 'first' was taken again went.
    expect(await store.claim('first', 60_000)).toEqual({ state: 'in_progress' });
    for (let i = 49; i < 500; i++) await store.claim(`b${i}`, 60_000);
    expect(store.size).toBe(50);
    expect(await store.claim('b499', 60_000)).toEqual({ state: 'in_progress' });
    expect(await store.claim('b450', 60_000)).toEqual({ state: 'in_progress' });
    expect((await store.claim('b449', 60_000)).state).toBe('claimed'); // evicted, so free again
    expect((await store.claim('a47', 60_000)).state).toBe('claimed');
  });

  it('keeps a renewed claim from eviction, as long as it is renewed: a renewal writes it anew', async () => {
    const store = new MemoryClaimStore({ maxEntries: 3 });
    const slow = await store.claim('evt:slow', 60_000);
    await store.claim('a', 60_000);
    await store.claim('b', 60_000);
    expect(slow.state === 'claimed' && (await store.renew('evt:slow', slow.token, 60_000))).toBe(true);
    await store.claim('c', 60_000);
    expect(await store.claim('evt:slow', 60_000)).toEqual({ state: 'in_progress' });
    expect((await store.claim('a', 60_000)).state).toBe('claimed'); // the oldest written went instead
  });

  it('does not grow while keys come and go below maxEntries, also after it once evicted', async () => {
    // In a process of its own with --expose-gc. A walk of the evictions left standing would keep every
    // table the Map outgrew after it alive, with their keys: about 100 MB here.
    const script = `
      import { MemoryClaimStore } from './src/index.ts';
      const used = () => { globalThis.gc(); return process.memoryUsage().heapUsed; };
      const store = new MemoryClaimStore({ maxEntries: 20000 });
      const churn = async (prefix, count) => {
        const tokens = [];
        for (let i = 0; i < count; i++) tokens.push((await store.claim(prefix + i, 60000)).token);
        for (let i = 0; i < count; i++) await store.release(prefix + i, tokens[i]);
      };
      await churn('fill', 20001); // one eviction
      const before = used();
      for (let round = 0; round < 30; round++) await churn('r' + round + ':', 15000);
      console.log(JSON.stringify({ grown: used() - before, size: store.size }));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', script], { cwd: new URL('../../..', import.meta.url), timeout: 60_000 });
    const { grown, size } = JSON.parse(stdout) as { grown: number; size: number };
    expect(size).toBe(0);
    expect(grown).toBeLessThan(20 * 2 ** 20);
  });

  it('warns once when it forgets a key before its time (maxEntries too small for the retention), not for expired ones', async () => {
    let now = 1_000;
    const warnings: unknown[][] = [];
    const store = new MemoryClaimStore({ maxEntries: 2, now: () => now, logger: { warn: (...args: unknown[]) => void warnings.push(args) } });
    // Expired keys make room without a word.
    await store.complete('evt:1', 'x', 10);
    await store.complete('evt:2', 'x', 10);
    now += 100;
    await store.complete('evt:3', 'x', 60_000);
    await store.complete('evt:4', 'x', 60_000);
    expect(warnings).toEqual([]);
    // A processed event forgotten while it should be remembered: said once, however many follow.
    for (let i = 5; i < 50; i++) await store.complete(`evt:${i}`, 'x', 60_000);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toEqual([{ maxEntries: 2 }, expect.stringMatching(/^webhook claim store full: .*a duplicate delivery of that event could run its handlers again\. Raise maxEntries/)]);
  });

  it('refuses a maxEntries that is not a whole number of 1 or more, naming the option', () => {
    for (const maxEntries of [0, -1, 1.5, Number.NaN, '100' as unknown as number]) {
      expect(() => new MemoryClaimStore({ maxEntries })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID', message: expect.stringContaining('maxEntries') }));
    }
  });

  it('costs memory for the keys it holds, not for maxEntries: a host with a Pay instance per merchant pays little for each', async () => {
    // In a process of its own with --expose-gc, so the figure is this store's alone.
    const script = `
      import { MemoryClaimStore } from './src/index.ts';
      const used = () => { globalThis.gc(); const m = process.memoryUsage(); return m.heapUsed + m.arrayBuffers; };
      const before = used();
      const stores = [];
      for (let i = 0; i < 100; i++) { const store = new MemoryClaimStore(); await store.claim('evt:1', 15000); stores.push(store); }
      console.log(Math.round((used() - before) / stores.length));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', script], { cwd: new URL('../../..', import.meta.url), timeout: 20_000 });
    // With lru-cache's `max`, each held arrays for all 100,000 entries from its first claim: about 4 MB.
    expect(Number(stdout)).toBeLessThan(100_000);
  });

  it('counts only live keys', async () => {
    let now = 1_000;
    const store = new MemoryClaimStore({ now: () => now });
    await store.claim('a', 100);
    await store.claim('b', 1_000);
    expect(store.size).toBe(2);
    now += 500;
    expect(store.size).toBe(1);
  });

  it('uses Date.now without a clock', async () => {
    const store = new MemoryClaimStore();
    const claim = await store.claim('k', 60_000);
    expect(claim.state).toBe('claimed');
    expect(claim.state === 'claimed' && (await store.complete('k', claim.token, 60_000))).toBe(true);
    expect(await store.claim('k', 60_000)).toEqual({ state: 'done' });
  });
});

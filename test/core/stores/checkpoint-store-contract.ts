import { describe, expect, it } from 'vitest';
import type { CheckpointStore } from 'paywidget-server';
import type { MakeStore } from './store-under-test.js';

/** What every CheckpointStore with locks must show; the Redis store runs the same contract. */
export function checkpointStoreContract(name: string, make: MakeStore<Required<CheckpointStore>>): void {
  describe(`${name}: CheckpointStore contract`, () => {
    it('keeps a value per name until it is overwritten', async () => {
      const { store } = await make();
      expect(await store.get('orders')).toBeUndefined();
      await store.set('orders', '{"v":1}');
      await store.set('other', 'x');
      await store.set('orders', '{"v":2}');
      expect(await store.get('orders')).toBe('{"v":2}');
      expect(await store.get('other')).toBe('x');
    });

    it('locks a name for one holder at a time; other names are free', async () => {
      const { store } = await make();
      const token = await store.acquireLock('orders', 1_000);
      expect(token).toEqual(expect.any(String));
      expect(await store.acquireLock('orders', 1_000)).toBeUndefined();
      expect(await store.acquireLock('other', 1_000)).toEqual(expect.any(String));
    });

    it('a renewed lock outlasts its first time-to-live; release frees it, but only with its token', async () => {
      const { store, advance } = await make();
      const token = (await store.acquireLock('orders', 1_000))!;
      await advance(700);
      expect(await store.renewLock('orders', token, 1_000)).toBe(true);
      await advance(700);
      expect(await store.acquireLock('orders', 1_000)).toBeUndefined();
      await store.releaseLock('orders', 'someone-else');
      expect(await store.acquireLock('orders', 1_000)).toBeUndefined();
      await store.releaseLock('orders', token);
      expect(await store.acquireLock('orders', 1_000)).toEqual(expect.any(String));
    });

    it('a lock that ran out goes to the next run; the old token can neither renew nor free it', async () => {
      const { store, advance } = await make();
      const old = (await store.acquireLock('orders', 1_000))!;
      await advance(1_100);
      const next = await store.acquireLock('orders', 1_000);
      expect(next).toEqual(expect.any(String));
      expect(next).not.toBe(old);
      expect(await store.renewLock('orders', old, 1_000)).toBe(false);
      await store.releaseLock('orders', old);
      expect(await store.acquireLock('orders', 1_000)).toBeUndefined();
      expect(await store.renewLock('orders', next!, 1_000)).toBe(true);
    });

    it('renewing a lock that ran out while nobody took it takes it again', async () => {
      const { store, advance } = await make();
      const token = (await store.acquireLock('orders', 1_000))!;
      await advance(1_100);
      expect(await store.renewLock('orders', token, 1_000)).toBe(true);
      expect(await store.acquireLock('orders', 1_000)).toBeUndefined();
      await store.releaseLock('orders', token);
      expect(await store.acquireLock('orders', 1_000)).toEqual(expect.any(String));
    });
  });
}

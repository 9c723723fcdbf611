import { describe, expect, it } from 'vitest';
import type { AdminTokenStore } from 'paywidget-server';
import type { MakeStore } from './store-under-test.js';

/** What every AdminTokenStore must show; the Redis store runs the same contract. */
export function adminTokenStoreContract(name: string, make: MakeStore<AdminTokenStore>): void {
  describe(`${name}: AdminTokenStore contract`, () => {
    it('keeps a token per key for its time to live, the latest set replacing the one before', async () => {
      const { store, advance } = await make();
      expect(await store.get('shop')).toBeUndefined();
      await store.set('shop', 'token-1', 10_000);
      await store.set('other', 'token-x', 10_000);
      await store.set('shop', 'token-2', 10_000);
      expect(await store.get('shop')).toBe('token-2');
      expect(await store.get('other')).toBe('token-x');
      await advance(9_000);
      expect(await store.get('shop')).toBe('token-2');
      await advance(1_500);
      expect(await store.get('shop')).toBeUndefined();
    });

    it('keeps a token set again for the new time to live, not the old one', async () => {
      const { store, advance } = await make();
      await store.set('shop', 'old', 2_000);
      await store.set('shop', 'new', 10_000);
      await advance(5_000);
      expect(await store.get('shop')).toBe('new');
    });
  });
}

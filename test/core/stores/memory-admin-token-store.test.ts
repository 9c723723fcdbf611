import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { MemoryAdminTokenStore } from 'paywidget-server';
import { adminTokenStoreContract } from './admin-token-store-contract.js';

function clocked() {
  let now = 1_700_000_000_000;
  return { store: new MemoryAdminTokenStore({ now: () => now }), advance: async (ms: number) => void (now += ms) };
}

adminTokenStoreContract('MemoryAdminTokenStore', clocked);

describe('MemoryAdminTokenStore', () => {
  it('answers a token up to the last millisecond of its time to live, and not at its end', async () => {
    const { store, advance } = clocked();
    await store.set('shop', 'token', 1_000);
    await advance(999);
    expect(await store.get('shop')).toBe('token');
    await advance(1);
    expect(await store.get('shop')).toBeUndefined();
  });

  it('never shows a token it holds when printed', async () => {
    const { store } = clocked();
    await store.set('shop', 'tok_secret_123', 1_000);
    expect(inspect(store, { depth: 10, showHidden: true })).not.toContain('tok_secret_123');
    expect(JSON.stringify(store)).not.toContain('tok_secret_123');
  });
});

import { describe, expect, it } from 'vitest';
import { MemoryLedgerStore } from 'paywidget-server';
import { ledgerStoreContract } from './ledger-store-contract.js';

ledgerStoreContract('MemoryLedgerStore', () => new MemoryLedgerStore());

describe('MemoryLedgerStore', () => {
  it('is bounded: past maxEntries the oldest final entry goes first, unresolved ones last', async () => {
    const store = new MemoryLedgerStore({ maxEntries: 3 });
    await store.record({ paymentId: 'open-1', status: 'processing', outcome: 'unresolved', source: 'poll', at: 1 });
    await store.record({ paymentId: 'done-1', status: 'succeeded', outcome: 'confirmed', source: 'poll', at: 2, orderId: 'o1' });
    await store.record({ paymentId: 'open-2', status: 'pending', outcome: 'unresolved', source: 'poll', at: 3 });
    await store.record({ paymentId: 'open-3', status: 'pending', outcome: 'unresolved', source: 'poll', at: 4 });
    expect(store.size).toBe(3);
    expect(await store.get('done-1')).toBeUndefined();
    expect(await store.byOrder('o1')).toEqual([]);
    await store.record({ paymentId: 'open-4', status: 'pending', outcome: 'unresolved', source: 'poll', at: 5 });
    expect(await store.get('open-1')).toBeUndefined();
    expect(store.size).toBe(3);
  });
});

import { describe, expect, it } from 'vitest';
import { MemoryLedgerStore } from 'paywidget-server';
import { ledgerStoreContract } from './ledger-store-contract.js';

ledgerStoreContract('MemoryLedgerStore', () => new MemoryLedgerStore());

describe('MemoryLedgerStore', () => {
  it('refuses a maxEntries that is not a whole number of 1 or more, naming the option (NaN would lift the cap, 0 keep one payment)', () => {
    for (const maxEntries of [0, -5, 2.5, Number.NaN, '3' as unknown as number]) {
      expect(() => new MemoryLedgerStore({ maxEntries })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID', message: expect.stringMatching(/^new MemoryLedgerStore\(\{ maxEntries \}\) takes a whole number of payments, 1 or more \(the default is 100,000\)/) }));
    }
    expect(new MemoryLedgerStore({ maxEntries: undefined })).toBeInstanceOf(MemoryLedgerStore);
  });

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

  it('drops failed payments before confirmed ones: a confirmed one keeps its order from being charged again', async () => {
    const store = new MemoryLedgerStore({ maxEntries: 3 });
    await store.record({ paymentId: 'paid', status: 'succeeded', outcome: 'confirmed', source: 'webhook', at: 1, orderId: 'o1' });
    await store.record({ paymentId: 'declined', status: 'declined', outcome: 'failed', source: 'poll', at: 2, orderId: 'o2' });
    // Failed first, confirmed later: its place in the queue is when it took its outcome.
    await store.record({ paymentId: 'late', status: 'processing', outcome: 'unresolved', source: 'poll', at: 3 });
    await store.record({ paymentId: 'late', status: 'declined', outcome: 'failed', source: 'poll', at: 4 });
    await store.record({ paymentId: 'next', status: 'pending', outcome: 'unresolved', source: 'poll', at: 5 });
    expect(await store.get('declined')).toBeUndefined();
    await store.record({ paymentId: 'after', status: 'pending', outcome: 'unresolved', source: 'poll', at: 6 });
    expect(await store.get('late')).toBeUndefined();
    expect((await store.byOrder('o1')).map((e) => e.paymentId)).toEqual(['paid']);
    await store.record({ paymentId: 'last', status: 'pending', outcome: 'unresolved', source: 'poll', at: 7 });
    expect(await store.get('paid')).toBeUndefined(); // only once no failed one is left
    expect(store.size).toBe(3);
  });

  it('drops entries nothing is known of first: ids a page made up while the service was down cannot push out a confirmed payment', async () => {
    const store = new MemoryLedgerStore({ maxEntries: 3 });
    await store.record({ paymentId: 'paid', status: 'succeeded', outcome: 'confirmed', source: 'webhook', at: 1, orderId: 'o1' });
    for (let i = 0; i < 5; i++) await store.record({ paymentId: `made-up-${i}`, status: null, outcome: 'unresolved', source: 'poll', at: 2 + i });
    expect((await store.byOrder('o1')).map((e) => e.paymentId)).toEqual(['paid']);
    expect(store.size).toBe(3);
    // One whose status is learned later leaves that line: it is the sweep's work now.
    await store.record({ paymentId: 'made-up-4', status: 'pending', outcome: 'unresolved', source: 'poll', at: 8 });
    await store.record({ paymentId: 'another', status: null, outcome: 'unresolved', source: 'poll', at: 9 });
    expect(await store.get('made-up-4')).toMatchObject({ status: 'pending' });
    expect(await store.get('made-up-3')).toBeUndefined();
    expect(await store.get('paid')).toBeDefined();
  });

  it('never drops the entry it just recorded: a confirmed payment stays in a ledger full of unresolved ones', async () => {
    const store = new MemoryLedgerStore({ maxEntries: 3 });
    for (let i = 1; i <= 3; i++) await store.record({ paymentId: `open-${i}`, status: 'pending', outcome: 'unresolved', source: 'poll', at: i });
    await store.record({ paymentId: 'paid', status: 'succeeded', outcome: 'confirmed', source: 'webhook', at: 4, orderId: 'o4' });
    expect(await store.get('paid')).toMatchObject({ outcome: 'confirmed' });
    expect((await store.byOrder('o4')).map((e) => e.paymentId)).toEqual(['paid']);
    expect(await store.get('open-1')).toBeUndefined();
    expect(store.size).toBe(3);
  });
});

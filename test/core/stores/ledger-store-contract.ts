import { describe, expect, it } from 'vitest';
import type { LedgerEntry, LedgerObservation, LedgerStore } from 'paywidget-server';

const observe = (paymentId: string, status: string | null, outcome: LedgerObservation['outcome'], at: number, extra: Partial<LedgerObservation> = {}): LedgerObservation => ({
  paymentId, status, outcome, source: 'poll', at, ...extra,
});

async function collect(iterable: AsyncIterable<LedgerEntry>): Promise<LedgerEntry[]> {
  const out: LedgerEntry[] = [];
  for await (const entry of iterable) out.push(entry);
  return out;
}

/** The behaviour every LedgerStore must show; the Redis store runs the same contract. */
export function ledgerStoreContract(name: string, make: () => LedgerStore | Promise<LedgerStore>): void {
  describe(`${name}: LedgerStore contract`, () => {
    it('records a new payment and answers it', async () => {
      const store = await make();
      const result = await store.record(observe('p1', 'processing', 'unresolved', 1_000, { orderId: 'o1', amount: 1999, currency: 'EUR' }));
      const expected = { paymentId: 'p1', status: 'processing', outcome: 'unresolved', source: 'poll', orderId: 'o1', amount: 1999, currency: 'EUR', firstSeenAt: 1_000, updatedAt: 1_000 };
      expect(result).toEqual({ entry: expected, previous: undefined, changed: true });
      expect(await store.get('p1')).toEqual(expected);
      expect(await store.get('p2')).toBeUndefined();
    });

    it('never moves a status backwards: a late unresolved or failed status does not undo confirmed', async () => {
      const store = await make();
      await store.record(observe('p1', 'processing', 'unresolved', 1_000));
      const confirmed = await store.record(observe('p1', 'succeeded', 'confirmed', 2_000, { source: 'webhook' }));
      expect(confirmed).toMatchObject({ changed: true, previous: { status: 'processing' }, entry: { status: 'succeeded', outcome: 'confirmed', source: 'webhook', updatedAt: 2_000, firstSeenAt: 1_000 } });
      for (const [status, outcome] of [['pending', 'unresolved'], ['declined', 'failed'], [null, 'unresolved'], ['paid', 'confirmed']] as const) {
        const late = await store.record(observe('p1', status, outcome, 3_000));
        expect(late.changed).toBe(false);
        expect(late.entry).toMatchObject({ status: 'succeeded', outcome: 'confirmed', source: 'webhook', updatedAt: 2_000 });
      }
    });

    it('moves up from failed to confirmed, and sideways between unresolved statuses', async () => {
      const store = await make();
      await store.record(observe('p1', null, 'unresolved', 1_000));
      expect((await store.record(observe('p1', 'requires_action', 'unresolved', 1_500))).entry.status).toBe('requires_action');
      expect((await store.record(observe('p1', 'processing', 'unresolved', 1_600))).entry.status).toBe('processing');
      expect((await store.record(observe('p1', 'declined', 'failed', 2_000))).entry).toMatchObject({ status: 'declined', outcome: 'failed' });
      expect((await store.record(observe('p1', 'canceled', 'failed', 2_500))).entry.status).toBe('declined');
      expect((await store.record(observe('p1', 'succeeded', 'confirmed', 3_000))).entry).toMatchObject({ status: 'succeeded', outcome: 'confirmed', updatedAt: 3_000 });
    });

    it('keeps the later of two unresolved statuses that land out of order, and never dates a change before the entry', async () => {
      const store = await make();
      await store.record(observe('p1', 'requires_action', 'unresolved', 2_000, { source: 'webhook' }));
      // Seen earlier by another instance, recorded after: not newer.
      const stale = await store.record(observe('p1', 'processing', 'unresolved', 1_000));
      expect(stale.changed).toBe(false);
      expect(stale.entry).toMatchObject({ status: 'requires_action', firstSeenAt: 2_000, updatedAt: 2_000 });
      // A higher rank still wins, whenever it was seen, but keeps the entry's dates in order.
      const confirmed = await store.record(observe('p1', 'succeeded', 'confirmed', 1_500));
      expect(confirmed.entry).toMatchObject({ status: 'succeeded', outcome: 'confirmed', firstSeenAt: 2_000, updatedAt: 2_000 });
      expect(await store.get('p1')).toMatchObject({ updatedAt: 2_000 });
    });

    it('takes any status over none, even one seen before the poll that learned nothing (a clock ahead)', async () => {
      const store = await make();
      await store.record(observe('p1', null, 'unresolved', 5_000));
      const pending = await store.record(observe('p1', 'pending', 'unresolved', 2_000, { source: 'webhook', orderId: 'o1' }));
      expect(pending.changed).toBe(true);
      expect(pending.entry).toMatchObject({ status: 'pending', source: 'webhook', orderId: 'o1', firstSeenAt: 5_000, updatedAt: 5_000 });
      // Nothing learned later does not undo it either.
      const nothing = await store.record(observe('p1', null, 'unresolved', 9_000));
      expect([nothing.changed, nothing.entry.status]).toEqual([false, 'pending']);
    });

    it('fills in order id, amount and currency when they arrive later, and never overwrites them', async () => {
      const store = await make();
      await store.record(observe('p1', 'succeeded', 'confirmed', 1_000));
      const filled = await store.record(observe('p1', 'processing', 'unresolved', 2_000, { orderId: 'o1', amount: 500, currency: 'USD' }));
      expect(filled.changed).toBe(false);
      expect(filled.entry).toMatchObject({ status: 'succeeded', orderId: 'o1', amount: 500, currency: 'USD', updatedAt: 2_000 });
      const ignored = await store.record(observe('p1', 'succeeded', 'confirmed', 3_000, { orderId: 'o2', amount: 1 }));
      expect(ignored.entry).toMatchObject({ orderId: 'o1', amount: 500 });
      expect(await store.byOrder('o1')).toEqual([ignored.entry]);
      expect(await store.byOrder('o2')).toEqual([]);
      // Nor when the status moves up in the same record: the payment stays with the order it was minted for.
      await store.record(observe('p2', 'processing', 'unresolved', 1_000, { orderId: 'o3', amount: 500, currency: 'EUR' }));
      const moved = await store.record(observe('p2', 'succeeded', 'confirmed', 2_000, { orderId: 'o4', amount: 1, currency: 'USD' }));
      expect(moved).toMatchObject({ changed: true, entry: { status: 'succeeded', orderId: 'o3', amount: 500, currency: 'EUR' } });
      expect((await store.byOrder('o3')).map((e) => e.paymentId)).toEqual(['p2']);
      expect(await store.byOrder('o4')).toEqual([]);
    });

    it('keeps an amount of 0 as 0, not as no amount', async () => {
      const store = await make();
      await store.record(observe('p1', 'succeeded', 'confirmed', 1_000, { amount: 0, currency: 'EUR' }));
      expect(await store.get('p1')).toMatchObject({ amount: 0 });
      // 0 is an amount: a later one does not fill it in.
      expect((await store.record(observe('p1', 'succeeded', 'confirmed', 2_000, { amount: 500 }))).entry.amount).toBe(0);
    });

    it('takes another unresolved status seen in the same millisecond (a coarse clock)', async () => {
      const store = await make();
      await store.record(observe('p1', 'pending', 'unresolved', 1_000));
      const same = await store.record(observe('p1', 'processing', 'unresolved', 1_000));
      expect(same).toMatchObject({ changed: true, entry: { status: 'processing', updatedAt: 1_000 } });
      expect(await store.get('p1')).toMatchObject({ status: 'processing' });
    });

    it('applies concurrent observations atomically: the highest rank wins whatever the order', async () => {
      const store = await make();
      const statuses = [['pending', 'unresolved'], ['succeeded', 'confirmed'], ['declined', 'failed'], ['processing', 'unresolved']] as const;
      await Promise.all(Array.from({ length: 40 }, (_, i) => store.record(observe('p1', statuses[i % 4]![0], statuses[i % 4]![1], 1_000 + i))));
      expect(await store.get('p1')).toMatchObject({ status: 'succeeded', outcome: 'confirmed' });
    });

    it('lists by outcome and first-seen window, oldest first; entries by order', async () => {
      const store = await make();
      await store.record(observe('a', 'processing', 'unresolved', 3_000, { orderId: 'o1' }));
      await store.record(observe('b', 'pending', 'unresolved', 1_000, { orderId: 'o1' }));
      await store.record(observe('c', 'succeeded', 'confirmed', 2_000, { orderId: 'o2' }));
      await store.record(observe('d', 'processing', 'unresolved', 5_000));
      expect((await collect(store.list({ outcome: 'unresolved' }))).map((e) => e.paymentId)).toEqual(['b', 'a', 'd']);
      expect((await collect(store.list({ outcome: 'unresolved', firstSeenTo: 3_000 }))).map((e) => e.paymentId)).toEqual(['b', 'a']);
      expect((await collect(store.list({ outcome: 'unresolved', firstSeenFrom: 2_000, firstSeenTo: 4_000 }))).map((e) => e.paymentId)).toEqual(['a']);
      // Both bounds hold at the instant itself.
      expect((await collect(store.list({ outcome: 'unresolved', firstSeenFrom: 3_000, firstSeenTo: 3_000 }))).map((e) => e.paymentId)).toEqual(['a']);
      expect((await collect(store.list({ outcome: 'confirmed' }))).map((e) => e.paymentId)).toEqual(['c']);
      await store.record(observe('a', 'succeeded', 'confirmed', 6_000));
      expect((await collect(store.list({ outcome: 'confirmed' }))).map((e) => e.paymentId)).toEqual(['c', 'a']);
      expect((await collect(store.list({ outcome: 'unresolved' }))).map((e) => e.paymentId)).toEqual(['b', 'd']);
      expect((await store.byOrder('o1')).map((e) => e.paymentId).sort()).toEqual(['a', 'b']);
    });

    it('lists by when an entry last changed, oldest change first: a payment confirmed long after it was first seen', async () => {
      const store = await make();
      await store.record(observe('old', 'processing', 'unresolved', 1_000, { orderId: 'o1' }));
      await store.record(observe('new', 'succeeded', 'confirmed', 8_000));
      await store.record(observe('old', 'succeeded', 'confirmed', 9_000));
      await store.record(observe('early', 'succeeded', 'confirmed', 2_000));
      const ids = async (query: Parameters<LedgerStore['list']>[0]) => (await collect(store.list(query))).map((e) => e.paymentId);
      expect(await ids({ outcome: 'confirmed', updatedFrom: 5_000 })).toEqual(['new', 'old']);
      expect(await ids({ outcome: 'confirmed', updatedFrom: 8_500, updatedTo: 9_000 })).toEqual(['old']);
      expect(await ids({ outcome: 'confirmed', updatedTo: 8_000 })).toEqual(['early', 'new']);
      // Both bounds at once: confirmed late, but first seen early.
      expect(await ids({ outcome: 'confirmed', updatedFrom: 5_000, firstSeenTo: 5_000 })).toEqual(['old']);
      // It left the unresolved listing by either index.
      expect(await ids({ outcome: 'unresolved', updatedFrom: 0 })).toEqual([]);
      // A later fill (the amount arrives) counts as a change.
      await store.record(observe('early', 'succeeded', 'confirmed', 9_500, { amount: 100 }));
      expect(await ids({ outcome: 'confirmed', updatedFrom: 9_100 })).toEqual(['early']);
      expect(await ids({ outcome: 'confirmed', updatedTo: 5_000 })).toEqual([]);
    });

    it('skips an entry that left the outcome while a long listing ran (a sweep meeting a webhook)', async () => {
      const store = await make();
      // More than a page of a store that pages underneath (Redis reads 200 at a time).
      for (let i = 0; i < 250; i++) await store.record(observe(`p${i}`, 'pending', 'unresolved', 1_000 + i));
      const seen: string[] = [];
      for await (const entry of store.list({ outcome: 'unresolved' })) {
        if (seen.length === 0) await store.record(observe('p240', 'succeeded', 'confirmed', 9_000));
        seen.push(entry.paymentId);
      }
      expect(seen).toHaveLength(249);
      expect(seen).not.toContain('p240');
    });

    it('lists each entry once when many share a millisecond, and lets the caller forget each as it comes (a prune)', async () => {
      const store = await make();
      // Three bursts of 150 payments, each within one millisecond: they straddle a page of a store that pages underneath.
      for (const at of [1_000, 1_001, 1_002]) {
        await Promise.all(Array.from({ length: 150 }, (_, i) => store.record(observe(`p${at}-${i}`, 'succeeded', 'confirmed', at))));
      }
      const seen: string[] = [];
      for await (const entry of store.list({ outcome: 'confirmed', updatedTo: 5_000 })) {
        seen.push(entry.paymentId);
        expect(await store.forget(entry.paymentId, { kind: 'settled', updatedTo: 5_000 })).toBe(true);
      }
      expect(new Set(seen).size).toBe(450);
      expect(seen.map((id) => id.slice(0, 5))).toEqual([...Array(150).fill('p1000'), ...Array(150).fill('p1001'), ...Array(150).fill('p1002')]);
      expect(await collect(store.list({ outcome: 'confirmed' }))).toEqual([]);
    });

    it('forgets an entry only while it meets the condition: never learned a status, or settled at or before a time', async () => {
      const store = await make();
      await store.record(observe('unknown', null, 'unresolved', 1_000));
      await store.record(observe('pending', 'pending', 'unresolved', 1_000));
      await store.record(observe('old-paid', 'succeeded', 'confirmed', 1_000, { orderId: 'o1' }));
      await store.record(observe('old-declined', 'declined', 'failed', 2_000, { orderId: 'o1' }));
      await store.record(observe('new-paid', 'succeeded', 'confirmed', 5_000, { orderId: 'o1' }));

      expect(await store.forget('pending', { kind: 'unknown' })).toBe(false);
      expect(await store.forget('old-paid', { kind: 'unknown' })).toBe(false);
      expect(await store.forget('missing', { kind: 'unknown' })).toBe(false);
      expect(await store.forget('unknown', { kind: 'unknown' })).toBe(true);
      expect(await store.forget('unknown', { kind: 'unknown' })).toBe(false);

      // Unresolved ones are never settled, however old; settled ones go at or before the time only.
      expect(await store.forget('pending', { kind: 'settled', updatedTo: 9_000 })).toBe(false);
      expect(await store.forget('new-paid', { kind: 'settled', updatedTo: 4_999 })).toBe(false);
      expect(await store.forget('old-declined', { kind: 'settled', updatedTo: 2_000 })).toBe(true);
      expect(await store.forget('old-paid', { kind: 'settled', updatedTo: 4_999 })).toBe(true);

      expect(await store.get('unknown')).toBeUndefined();
      expect(await store.get('old-paid')).toBeUndefined();
      expect((await store.byOrder('o1')).map((e) => e.paymentId)).toEqual(['new-paid']);
      expect((await collect(store.list({ outcome: 'unresolved' }))).map((e) => e.paymentId)).toEqual(['pending']);
      expect((await collect(store.list({ outcome: 'confirmed', updatedTo: 9_000 }))).map((e) => e.paymentId)).toEqual(['new-paid']);
      expect(await collect(store.list({ outcome: 'failed' }))).toEqual([]);
      // A forgotten id starts afresh when heard of again, under its new order only.
      expect((await store.record(observe('old-paid', 'succeeded', 'confirmed', 6_000, { orderId: 'o9' }))).previous).toBeUndefined();
      expect((await store.byOrder('o1')).map((e) => e.paymentId)).toEqual(['new-paid']);
      expect((await store.byOrder('o9')).map((e) => e.paymentId)).toEqual(['old-paid']);
    });

    it('keeps an entry whose status was learned after it was listed for forgetting, and one whose order id was filled in is forgotten whole', async () => {
      const store = await make();
      await store.record(observe('p1', null, 'unresolved', 1_000));
      await store.record(observe('p1', 'pending', 'unresolved', 2_000, { source: 'webhook' }));
      expect(await store.forget('p1', { kind: 'unknown' })).toBe(false);
      expect(await store.get('p1')).toMatchObject({ status: 'pending' });

      await store.record(observe('p2', 'succeeded', 'confirmed', 1_000));
      await store.record(observe('p2', 'succeeded', 'confirmed', 1_500, { orderId: 'o2' }));
      expect(await store.forget('p2', { kind: 'settled', updatedTo: 2_000 })).toBe(true);
      expect(await store.byOrder('o2')).toEqual([]);
    });

    it('hands out copies: changing an answer changes nothing stored', async () => {
      const store = await make();
      const { entry } = await store.record(observe('p1', 'processing', 'unresolved', 1_000));
      entry.status = 'succeeded';
      const read = await store.get('p1');
      read!.outcome = 'confirmed';
      expect(await store.get('p1')).toMatchObject({ status: 'processing', outcome: 'unresolved' });
      // An observation that changes nothing answers the stored entry as `previous`: a copy too.
      const again = await store.record(observe('p1', 'processing', 'unresolved', 2_000));
      again.previous!.status = 'failed';
      again.entry.status = 'failed';
      expect(await store.get('p1')).toMatchObject({ status: 'processing', outcome: 'unresolved' });
    });
  });
}

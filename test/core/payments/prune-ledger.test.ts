import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryLedgerStore, PayError } from 'paywidget-server';
import { startSandbox, type Sandbox } from 'paywidget-server/sandbox';
import { captureLogger } from '../../helpers/capture-logger.js';
import { payByBank, payByCard, payFor } from './helpers.js';

const DAY = 86_400_000;
let sb: Sandbox;

beforeAll(async () => {
  sb = await startSandbox();
});
afterAll(() => sb.close());

/** A pay instance on a clock the test moves. */
function payOnClock(ledger = new MemoryLedgerStore()) {
  let now = Date.UTC(2026, 0, 10);
  const logger = captureLogger();
  const pay = payFor(sb, { logger, now: () => now, stores: { ledger } });
  return { pay, ledger, logger, advance: (ms: number) => (now += ms) };
}

describe('pay.payments.pruneLedger', () => {
  it('removes confirmed and failed payments unchanged for longer than olderThanMs, and keeps unresolved ones whatever their age', async () => {
    const { pay, logger, advance } = payOnClock();
    const paid = await payByCard(pay, sb, sb.testCards.succeeds, { amount: 100, currency: 'EUR', orderId: 'prune-paid' });
    const declined = await payByCard(pay, sb, sb.testCards.declines, { amount: 200, currency: 'EUR', orderId: 'prune-declined' });
    const pending = await payByBank(pay, sb, { amount: 300, currency: 'EUR', orderId: 'prune-pending' });
    for (const p of [paid, declined, pending]) await pay.payments.reconcile(p.paymentId);
    expect((await pay.payments.get(paid.paymentId))?.outcome).toBe('confirmed');
    expect((await pay.payments.get(declined.paymentId))?.outcome).toBe('failed');

    advance(2 * DAY);
    const recent = await payByCard(pay, sb, sb.testCards.succeeds, { amount: 400, currency: 'EUR', orderId: 'prune-recent' });
    await pay.payments.reconcile(recent.paymentId);

    expect(await pay.payments.pruneLedger({ olderThanMs: 3 * DAY })).toEqual({ removed: 0, complete: true });
    expect(await pay.payments.pruneLedger({ olderThanMs: DAY })).toEqual({ removed: 2, complete: true });
    expect(await pay.payments.get(paid.paymentId)).toBeUndefined();
    expect(await pay.payments.get(declined.paymentId)).toBeUndefined();
    expect(await pay.payments.byOrder('prune-paid')).toEqual([]);
    expect(await pay.payments.get(pending.paymentId)).toMatchObject({ outcome: 'unresolved', status: 'pending' });
    expect(await pay.payments.get(recent.paymentId)).toMatchObject({ outcome: 'confirmed' });
    expect(logger.text()).toContain('payment ledger pruned');

    // The sweep still finds the old unresolved payment.
    expect((await pay.payments.reconcilePending()).checked).toBe(1);
  });

  it('works through more entries than it removes at once, and stops between entries when its signal aborts', async () => {
    const { pay, ledger, advance } = payOnClock();
    const start = Date.UTC(2026, 0, 10);
    for (let i = 0; i < 130; i++) {
      await ledger.record({ paymentId: `pay_old_${i}`, status: i % 2 ? 'succeeded' : 'declined', outcome: i % 2 ? 'confirmed' : 'failed', source: 'webhook', at: start + i });
    }
    advance(2 * DAY);
    const stopped = new AbortController();
    stopped.abort();
    expect(await pay.payments.pruneLedger({ olderThanMs: DAY, signal: stopped.signal })).toEqual({ removed: 0, complete: false });
    expect(await pay.payments.pruneLedger({ olderThanMs: DAY })).toEqual({ removed: 130, complete: true });
    expect(ledger.size).toBe(0);
  });

  it('refuses to keep less than a day, or no olderThanMs: a recent confirmation keeps its order from being minted again', async () => {
    const { pay } = payOnClock();
    for (const options of [{ olderThanMs: DAY - 1 }, { olderThanMs: Number.NaN }, {}, undefined]) {
      const error = await pay.payments.pruneLedger(options as never).then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(PayError);
      expect(error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('at least 86400000') });
    }
    // Keep for ever: past the dates a Date holds, it failed with a bare RangeError after walking the ledger.
    await expect(pay.payments.pruneLedger({ olderThanMs: Number.MAX_SAFE_INTEGER })).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('to keep every payment, do not prune') });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toMinorUnits, type OrderFinding, type Pay } from 'paywidget-server';
import { startSandbox, type Sandbox, type SandboxOrder, type SandboxPaymentStatus } from 'paywidget-server/sandbox';
import { redisStores } from 'paywidget-server/redis';
import { connectedRedis, deletePrefix, useRedisUrl } from '../../helpers/redis-server.js';
import { payFor } from './helpers.js';

let sb: Sandbox;
let pay: Pay;
let windowFrom: Date;
const ids: Record<string, string> = {};
const orders: Record<string, SandboxOrder> = {};

const total = (order: SandboxOrder) => ({
  amount: toMinorUnits(String(order.grand_total), order.order_currency_code as string),
  currency: order.order_currency_code as string,
});
const inc = (key: string) => orders[key]!.increment_id as string;
const utc = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');

/** A payment the service holds (created directly in the sandbox), then learned by the ledger through a status poll. */
async function payment(key: string, input: { orderId: string; amount: number; currency: string; status?: SandboxPaymentStatus }) {
  const created = sb.payments.create({ status: 'succeeded', ...input });
  ids[key] = created.id;
  await pay.payments.reconcile(created.id, { budgetMs: 0 });
}

/**
 * A payment for `order` the ledger first sees processing, then (in a later second: windows are whole
 * seconds) confirmed; `from` is that later second, where a window that sees only the confirmation starts.
 */
async function seenPendingThenConfirmed(own: Pay, order: SandboxOrder) {
  const payment = sb.payments.create({ status: 'processing', orderId: order.increment_id as string, ...total(order) });
  await own.payments.reconcile(payment.id, { budgetMs: 0 });
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  const from = new Date();
  sb.payments.setStatus(payment.id, 'succeeded');
  expect((await own.payments.reconcile(payment.id, { budgetMs: 0 })).outcome).toBe('confirmed');
  return { payment, from };
}

beforeAll(async () => {
  // 30 generated orders, all created in 2025: outside the window, so they must not show up.
  sb = await startSandbox({ commerce: { orders: 30 } });
  pay = payFor(sb);
  windowFrom = new Date(Date.now() - 1_000);
  const paid = { state: 'processing', status: 'processing' };
  const unpaid = { state: 'new', status: 'pending' };
  for (const [key, state] of Object.entries({ A: paid, B: unpaid, C: paid, C2: paid, D: paid, E: paid, F: paid, G: paid, H: unpaid, I: unpaid, J: paid, K: unpaid })) {
    orders[key] = sb.commerce.addOrder({ ...state, order_currency_code: key === 'E' ? 'USD' : 'EUR' });
  }
  // J was placed two hours before the window (inside the default 24 h look-behind); its payment confirmed now.
  orders.J = sb.commerce.setOrder(orders.J!.entity_id, { created_at: utc(windowFrom.getTime() - 2 * 3_600_000) });
  // K too, still awaiting payment; its payment, confirmed in the window, is 1 cent short: the run over K's own window came too early to see it.
  orders.K = sb.commerce.setOrder(orders.K!.entity_id, { created_at: utc(windowFrom.getTime() - 3_600_000) });
  // L's total has more decimals than its currency: nothing can be compared with it, so it is not counted as paid.
  orders.L = sb.commerce.addOrder({ ...paid, order_currency_code: 'JPY', grand_total: 1999.5 });

  await payment('A', { orderId: inc('A'), ...total(orders.A!) }); // paid and confirmed
  await payment('B', { orderId: inc('B'), ...total(orders.B!) }); // confirmed, order still awaiting payment
  await payment('C2', { orderId: inc('C2'), ...total(orders.C2!), status: 'declined' }); // paid order, only a declined payment
  await payment('D', { orderId: inc('D'), ...total(orders.D!), amount: total(orders.D!).amount - 100 }); // short payment
  await payment('E', { orderId: inc('E'), amount: total(orders.E!).amount, currency: 'EUR' }); // wrong currency
  await payment('F1', { orderId: inc('F'), ...total(orders.F!) }); // charged twice
  await payment('F2', { orderId: inc('F'), ...total(orders.F!) });
  await payment('G', { orderId: String(orders.G!.entity_id), ...total(orders.G!) }); // minted under entity_id
  await payment('I', { orderId: inc('I'), ...total(orders.I!), status: 'processing' }); // still unresolved
  await payment('J', { orderId: inc('J'), ...total(orders.J!) });
  await payment('K', { orderId: inc('K'), amount: total(orders.K!).amount - 1, currency: total(orders.K!).currency });
  await payment('L', { orderId: inc('L'), amount: 5, currency: 'JPY' });
  await payment('X', { orderId: 'no-such-order', amount: 1234, currency: 'EUR' }); // an order nobody has
  // M's payment was 999.99 USD, but its status answer said only the order and that it succeeded: the amount was never known.
  orders.M = sb.commerce.addOrder(paid);
  const unreported = sb.payments.create({ status: 'succeeded', orderId: inc('M'), amount: 99_999, currency: 'USD' });
  ids.M = unreported.id;
  sb.faults.inject({ route: `GET /api/v1/payments/${unreported.id}/status`, status: 200, body: JSON.stringify({ payment_id: unreported.id, status: 'succeeded', order_id: inc('M') }), times: 1 });
  await pay.payments.reconcile(unreported.id, { budgetMs: 0 });
});
afterAll(() => sb.close());

describe('reconcileOrders', () => {
  it('finds every seeded disagreement and nothing else', async () => {
    const told: OrderFinding[] = [];
    const report = await pay.reconcileOrders({ createdFrom: windowFrom, createdTo: new Date(Date.now() + 60_000), onFinding: (f) => void told.push(f) });

    expect(report.orders).toBe(12); // A–I, L and M; not J or K (before the window), not the generated ones
    expect(report.paid).toBe(2); // A, and G through its entity_id; not M, whose payment's amount is unknown
    expect(report.unpaid).toBe(2); // H, and I whose payment is still processing
    const summary = report.findings.map((f) => [f.kind, f.orderId, f.paymentId]);
    expect(summary).toEqual(expect.arrayContaining([
      ['payment_confirmed_order_unpaid', inc('B'), ids.B],
      ['order_paid_without_payment', inc('C'), undefined],
      ['order_paid_without_payment', inc('C2'), undefined],
      ['amount_mismatch', inc('D'), ids.D],
      ['amount_mismatch', inc('E'), ids.E],
      ['multiple_confirmed_payments', inc('F'), ids.F1],
      ['payment_for_unknown_order', 'no-such-order', ids.X],
      ['payment_confirmed_order_unpaid', inc('K'), ids.K],
      ['amount_mismatch', inc('K'), ids.K],
      ['amount_mismatch', inc('L'), ids.L],
      ['amount_unverified', inc('M'), ids.M],
    ]));
    expect(report.findings).toHaveLength(11);
    expect(report.counts).toEqual({
      payment_confirmed_order_unpaid: 2, order_paid_without_payment: 2, amount_mismatch: 4, amount_unverified: 1, multiple_confirmed_payments: 1, payment_for_unknown_order: 1,
    });
    expect(told).toEqual(report.findings);

    const byKind = (kind: string, order: string) => report.findings.find((f) => f.kind === kind && f.orderId === order)!;
    expect(byKind('amount_mismatch', inc('D'))).toMatchObject({ expected: total(orders.D!), actual: { amount: total(orders.D!).amount - 100, currency: 'EUR' }, entityId: orders.D!.entity_id });
    expect(byKind('amount_mismatch', inc('E'))).toMatchObject({ expected: { currency: 'USD' }, actual: { currency: 'EUR' } });
    expect(byKind('multiple_confirmed_payments', inc('F')).paymentIds).toEqual([ids.F1, ids.F2]);
    expect(byKind('amount_mismatch', inc('L'))).toMatchObject({ actual: { amount: 5, currency: 'JPY' }, message: expect.stringMatching(/not an amount of that currency/) });
    expect(byKind('amount_mismatch', inc('L')).expected).toBeUndefined();
    expect(byKind('amount_unverified', inc('M'))).toMatchObject({ expected: total(orders.M!), actual: {}, message: expect.stringMatching(/its amount and currency were never reported/) });
    expect(byKind('payment_confirmed_order_unpaid', inc('B'))).toMatchObject({ orderState: 'new', orderStatus: 'pending', paymentStatus: 'succeeded' });
    for (const finding of report.findings) expect(finding.message.length).toBeGreaterThan(20);
  });

  it('without the look-behind, looks up the orders placed before the window one by one, with the same findings', async () => {
    const withLookBehind = await pay.reconcileOrders({ createdFrom: windowFrom, createdTo: new Date(Date.now() + 60_000) });
    const searchesBefore = sb.commerce.stats().searches;
    const report = await pay.reconcileOrders({ createdFrom: windowFrom, createdTo: new Date(Date.now() + 60_000), lookbehindMs: 0 });
    expect(report.findings.map((f) => [f.kind, f.orderId, f.paymentId]).sort()).toEqual(withLookBehind.findings.map((f) => [f.kind, f.orderId, f.paymentId]).sort());
    expect(report.findings.filter((f) => f.kind === 'payment_for_unknown_order').map((f) => f.paymentId)).toEqual([ids.X]);
    // One search for the window's orders, then J's and K's orders by their increment_id, and the order nobody has.
    expect(sb.commerce.stats().searches - searchesBefore).toBe(4);
  });

  it('checks a payment confirmed days after its order was placed, longer than the look-behind (a bank transfer)', async () => {
    const own = payFor(sb);
    const order = sb.commerce.addOrder({ state: 'new', status: 'pending' });
    const { payment: transfer, from } = await seenPendingThenConfirmed(own, order);
    // The order was placed "three days" before the window: far outside a one-hour look-behind.
    sb.commerce.setOrder(order.entity_id, { created_at: utc(from.getTime() - 3 * 86_400_000) });

    const report = await own.reconcileOrders({ createdFrom: from, createdTo: new Date(Date.now() + 60_000), lookbehindMs: 3_600_000 });
    expect(report.findings.map((f) => [f.kind, f.orderId, f.paymentId])).toEqual([['payment_confirmed_order_unpaid', order.increment_id, transfer.id]]);
    expect(report.orders).toBe(0); // checked against its order, not counted among the window's
  });

  it('checks a payment first seen before its window and confirmed in it (3-D Secure, a bank transfer), once', async () => {
    const own = payFor(sb);
    const order = sb.commerce.addOrder({ state: 'new', status: 'pending' });
    const pending = sb.payments.create({ status: 'processing', orderId: order.increment_id as string, ...total(order) });
    const stray = sb.payments.create({ status: 'processing', orderId: 'no-such-order-2', amount: 100, currency: 'EUR' });
    for (const { id } of [pending, stray]) await own.payments.reconcile(id, { budgetMs: 0 });
    // The next window starts in a later second (windows are whole seconds): both were first seen before it.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const from = new Date();
    for (const { id } of [pending, stray]) sb.payments.setStatus(id, 'succeeded');
    for (const { id } of [pending, stray]) expect((await own.payments.reconcile(id, { budgetMs: 0 })).outcome).toBe('confirmed');

    const report = await own.reconcileOrders({ createdFrom: from, createdTo: new Date(Date.now() + 60_000) });
    expect(report.findings.map((f) => [f.kind, f.paymentId])).toEqual([
      ['payment_confirmed_order_unpaid', pending.id],
      ['payment_for_unknown_order', stray.id],
    ]);
    // A later window does not report them again.
    const later = await own.reconcileOrders({ createdFrom: new Date(Date.now() + 120_000), createdTo: new Date(Date.now() + 180_000) });
    expect(later.findings).toEqual([]);
  });

  it('checks again an order whose payment was confirmed while the run went on (a window not yet over), reading the order afresh', async () => {
    const own = payFor(sb);
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // a window of its own second
    const from = new Date();
    const awaiting = sb.commerce.addOrder({ state: 'new', status: 'pending' });
    const pending = sb.payments.create({ status: 'processing', orderId: awaiting.increment_id as string, ...total(awaiting) });
    await own.payments.reconcile(pending.id, { budgetMs: 0 });
    sb.commerce.addOrder({ state: 'processing', status: 'processing' }); // marked paid without a payment: a finding, later in the walk
    let confirmedMidRun = false;
    const report = await own.reconcileOrders({
      createdFrom: from,
      createdTo: new Date(Date.now() + 60_000),
      onFinding: async () => {
        if (confirmedMidRun) return;
        confirmedMidRun = true;
        // The awaiting order was checked (unpaid) before this: its payment confirms now, as a webhook or a sweep records it.
        sb.payments.setStatus(pending.id, 'succeeded');
        expect((await own.payments.reconcile(pending.id, { budgetMs: 0 })).outcome).toBe('confirmed');
      },
    });
    expect(report.findings.map((f) => [f.kind, f.orderId])).toEqual([
      ['order_paid_without_payment', expect.any(String)],
      ['payment_confirmed_order_unpaid', awaiting.increment_id],
    ]);
    // Counted by the second check, not the first: a disagreement now, no longer an unpaid order.
    expect([report.orders, report.paid, report.unpaid]).toEqual([2, 0, 0]);
  });

  it('counts a free order marked paid (nothing due) as paid, not as paid without a payment', async () => {
    const own = payFor(sb);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const from = new Date();
    sb.commerce.addOrder({ state: 'complete', status: 'complete', grand_total: 0, base_grand_total: 0, total_due: 0 });
    const report = await own.reconcileOrders({ createdFrom: from, createdTo: new Date(Date.now() + 60_000) });
    expect([report.orders, report.paid, report.unpaid, report.findings]).toEqual([1, 1, 0, []]);
  });

  it('reports a payment for an order id no order number can have as for an unknown order, and goes on with the run', async () => {
    const own = payFor(sb);
    // A window of its own, in a later second than the orders of the other tests (windows are whole seconds).
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const from = new Date();
    // Order ids a payment service echoes as minted; a search by increment_id refuses each.
    const odd = [' 1001', 'R'.repeat(256)].map((orderId) => sb.payments.create({ status: 'succeeded', orderId, amount: 100, currency: 'EUR' }));
    const order = sb.commerce.addOrder({ state: 'new', status: 'pending' });
    const owed = sb.payments.create({ status: 'succeeded', orderId: order.increment_id as string, ...total(order) });
    for (const { id } of [...odd, owed]) expect((await own.payments.reconcile(id, { budgetMs: 0 })).outcome).toBe('confirmed');

    const report = await own.reconcileOrders({ createdFrom: from, createdTo: new Date(Date.now() + 60_000) });
    expect(report.findings.map((f) => [f.kind, f.paymentId]).sort()).toEqual([
      ['payment_confirmed_order_unpaid', owed.id],
      ...odd.map(({ id }) => ['payment_for_unknown_order', id]),
    ].sort());
  });

  it('holds its window to the second at both ends, counts an order paid by total_paid, and checks an older order once for two payments', async () => {
    // A window of its own in 2030, and a clock that confirms every payment half a second into its last second.
    const own = payFor(sb, { now: () => Date.parse('2030-01-01T13:00:00.500Z') });
    // Placed at the very first second of the window; on hold, but its total is paid.
    const held = sb.commerce.addOrder({ state: 'holded', status: 'holded' });
    sb.commerce.setOrder(held.entity_id, { created_at: '2030-01-01 12:00:00', total_paid: held.grand_total });
    // Placed an hour before the window, in the look-behind, and paid twice within the window.
    const older = sb.commerce.addOrder({ state: 'new', status: 'pending' });
    sb.commerce.setOrder(older.entity_id, { created_at: '2030-01-01 11:00:00' });
    const payments = [held, older, older].map((order) => sb.payments.create({ status: 'succeeded', orderId: order.increment_id as string, ...total(order) }));
    for (const { id } of payments) expect((await own.payments.reconcile(id, { budgetMs: 0 })).outcome).toBe('confirmed');

    const report = await own.reconcileOrders({ createdFrom: '2030-01-01 12:00:00', createdTo: '2030-01-01 13:00:00' });
    expect(report).toMatchObject({ orders: 1, paid: 1, unpaid: 0 });
    expect(report.findings.map((f) => [f.kind, f.orderId])).toEqual([
      ['payment_confirmed_order_unpaid', older.increment_id],
      ['multiple_confirmed_payments', older.increment_id],
    ]);
  });

  it('finds a payment confirmed in the window in a Redis ledger written before the index by confirmation time', async () => {
    const redis = await useRedisUrl();
    const client = await connectedRedis(redis.url);
    const prefix = `reconcile-old-ledger:${process.pid}:`;
    try {
      const own = payFor(sb, { stores: redisStores(client, { prefix }) });
      const order = sb.commerce.addOrder({ state: 'new', status: 'pending' });
      sb.commerce.setOrder(order.entity_id, { created_at: utc(Date.now() - 2 * 3_600_000) });
      const { payment: pending, from } = await seenPendingThenConfirmed(own, order);
      // As an older version (or an instance not yet upgraded) wrote it: no index by updatedAt.
      expect(await client.zrem(`${prefix}ledger:updated:confirmed`, pending.id)).toBe(1);

      const report = await own.reconcileOrders({ createdFrom: from, createdTo: new Date(Date.now() + 60_000) });
      expect(report.findings.map((f) => [f.kind, f.paymentId])).toEqual([['payment_confirmed_order_unpaid', pending.id]]);
    } finally {
      await deletePrefix(client, prefix);
      client.disconnect();
      await redis.done();
    }
  });

  it('stops at an abort during the look-ups of older orders, sending no more of them', async () => {
    const own = payFor(sb);
    const from = new Date(Date.now() + 1_000);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    for (let i = 0; i < 5; i++) {
      const stray = sb.payments.create({ status: 'succeeded', orderId: `gone-${i}`, amount: 100, currency: 'EUR' });
      await own.payments.reconcile(stray.id, { budgetMs: 0 });
    }
    const controller = new AbortController();
    const searchesBefore = sb.commerce.stats().searches;
    const run = own.reconcileOrders({ createdFrom: from, createdTo: new Date(Date.now() + 60_000), signal: controller.signal, onFinding: () => controller.abort(new Error('stopped')) });
    await expect(run).rejects.toThrow('stopped');
    // The window's one page, then the first look-up: its finding aborted the rest.
    expect(sb.commerce.stats().searches - searchesBefore).toBe(2);
  });

  it("stops at an abort while it looks up an older order, with the signal's reason, not a platform time-out", async () => {
    const own = payFor(sb);
    const from = new Date(Date.now() + 1_000);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const stray = sb.payments.create({ status: 'succeeded', orderId: '000000777', amount: 100, currency: 'EUR' });
    await own.payments.reconcile(stray.id, { budgetMs: 0 });
    // The window's page at once, then a look-up the platform takes long to answer.
    const page = sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders', latencyMs: 1, times: 1 });
    const slow = sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders', latencyMs: 20_000, times: Infinity });
    try {
      const run = own.reconcileOrders({ createdFrom: from, createdTo: new Date(Date.now() + 60_000), signal: AbortSignal.timeout(500) });
      await expect(run).rejects.toMatchObject({ name: 'TimeoutError' });
      expect(sb.commerce.faults.list().find((fault) => fault.id === slow)?.hits).toBe(1);
    } finally {
      sb.commerce.faults.remove(page);
      sb.commerce.faults.remove(slow);
    }
  });

  it('a window with no activity reports nothing', async () => {
    const report = await pay.reconcileOrders({ createdFrom: '2020-01-01 00:00:00', createdTo: '2020-12-31 23:59:59' });
    expect(report).toMatchObject({ orders: 0, paid: 0, unpaid: 0, findings: [] });
  });

  it('checks its window', async () => {
    await expect(pay.reconcileOrders({ createdFrom: '2025-02-01 00:00:00', createdTo: '2025-01-01 00:00:00' })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(pay.reconcileOrders({ createdFrom: 'yesterday', createdTo: new Date() })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'createdFrom' } });
    await expect(pay.reconcileOrders({} as never)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });
});

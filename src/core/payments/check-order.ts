/**
 * One order checked against the payments the ledger holds for it: what reconcileOrders does for each order of its
 * window, and for an older order a payment of the window names.
 */

import { toMinorUnits } from '../money/index.js';
import type { CommerceOrder } from '../commerce/index.js';
import type { LedgerEntry } from '../stores/ledger-store.js';
import { entriesOfOrder, type Ledger } from './ledger.js';
import type { OrderFinding, OrderReconciliationReport } from './reconcile-orders.js';

/** The order's grand total in minor units; undefined when it is no amount of its currency. */
function orderTotal(order: Pick<CommerceOrder, 'grand_total' | 'order_currency_code'>): { amount: number; currency: string } | undefined {
  try {
    return { amount: toMinorUnits(order.grand_total, order.order_currency_code), currency: order.order_currency_code };
  } catch {
    return undefined;
  }
}

/** What checking an order reads of it. */
export type CheckedOrder = Pick<CommerceOrder, 'increment_id' | 'entity_id' | 'state' | 'status' | 'grand_total' | 'order_currency_code'>;
/** A look-behind order as kept until the ledger walk: what the check reads, and whether the platform considers it paid. */
export type LookBehindOrder = CheckedOrder & { paid: boolean };

/** Only what the check reads, so a busy day of orders before the window stays small. */
export function slim(order: CommerceOrder, isPaid: (order: CommerceOrder) => boolean): LookBehindOrder {
  return { increment_id: order.increment_id, entity_id: order.entity_id, state: order.state, status: order.status, grand_total: order.grand_total, order_currency_code: order.order_currency_code, paid: isPaid(order) };
}

/** What checking an order found: counted as paid or unpaid, or a disagreement reported. */
export type CheckResult = 'paid' | 'unpaid' | 'disagrees';

/** Checks one order against its ledger entries; `report` counts it among the window's orders (undefined: a look-behind order). */
export async function checkOrder(ledger: Ledger, order: CheckedOrder, paid: boolean, report: OrderReconciliationReport | undefined, found: (f: OrderFinding) => Promise<void>): Promise<CheckResult> {
  const confirmed = (await entriesOfOrder(ledger, order)).filter((e) => e.outcome === 'confirmed').sort((a, b) => a.firstSeenAt - b.firstSeenAt);
  const base = { orderId: order.increment_id, entityId: order.entity_id, orderState: order.state, orderStatus: order.status };
  const expected = orderTotal(order);
  let agrees = true;

  if (confirmed.length === 0) {
    if (!paid) {
      if (report) report.unpaid += 1;
      return 'unpaid';
    }
    // Nothing due (a coupon for all of it): paid without a payment, as it should be. No token is ever minted for one.
    if (expected?.amount === 0) {
      if (report) report.paid += 1;
      return 'paid';
    }
    await found({ ...base, kind: 'order_paid_without_payment', ...(expected ? { expected } : {}), message: `Order ${order.increment_id} is marked paid (${order.state}/${order.status}) but no confirmed payment is recorded for it.` });
    return 'disagrees';
  }
  const first = confirmed[0]!;
  if (!paid) {
    agrees = false;
    await found({ ...base, kind: 'payment_confirmed_order_unpaid', paymentId: first.paymentId, paymentStatus: first.status, message: `Payment ${first.paymentId} is confirmed but order ${order.increment_id} is ${order.state}/${order.status}, not marked paid.` });
  }
  if (confirmed.length > 1) {
    agrees = false;
    const ids = confirmed.map((e) => e.paymentId);
    await found({ ...base, kind: 'multiple_confirmed_payments', paymentId: first.paymentId, paymentIds: ids, message: `Order ${order.increment_id} has ${ids.length} confirmed payments (${ids.join(', ')}): the shopper may have been charged more than once.` });
  }
  if (!expected) {
    agrees = false;
    await found({ ...base, kind: 'amount_mismatch', paymentId: first.paymentId, paymentStatus: first.status, actual: amountOf(first), message: `Order ${order.increment_id} totals ${order.grand_total} ${order.order_currency_code}, which is not an amount of that currency, so payment ${first.paymentId} could not be checked against it.` });
  }
  for (const entry of confirmed) {
    if (!expected) break; // no total to compare with: reported above
    const amountDiffers = entry.amount !== undefined && entry.amount !== expected.amount;
    const currencyDiffers = entry.currency !== undefined && entry.currency !== expected.currency;
    const about = { ...base, paymentId: entry.paymentId, paymentStatus: entry.status, expected, actual: amountOf(entry) };
    if (amountDiffers || currencyDiffers) {
      agrees = false;
      await found({ ...about, kind: 'amount_mismatch', message: `Payment ${entry.paymentId} is for ${entry.amount ?? '?'} ${entry.currency ?? '?'} (minor units) but order ${order.increment_id} totals ${expected.amount} ${expected.currency}.` });
      continue;
    }
    const unknown = unreported(entry);
    if (unknown === undefined) continue;
    // Not counted as paid: a payment of another amount, or in another currency, would look the same.
    agrees = false;
    await found({ ...about, kind: 'amount_unverified', message: `Payment ${entry.paymentId} is confirmed, but its ${unknown} never reported (not in its webhook, not in its status answer), so it could not be checked against order ${order.increment_id}'s ${expected.amount} ${expected.currency}; check it in the payment service's dashboard.` });
  }
  if (!agrees) return 'disagrees';
  if (report) report.paid += 1;
  return 'paid';
}

/** What the ledger never learned of a payment's amount, as a sentence's subject and verb; undefined when it knows both. */
function unreported({ amount, currency }: LedgerEntry): string | undefined {
  if (amount === undefined) return currency === undefined ? 'amount and currency were' : 'amount was';
  return currency === undefined ? 'currency was' : undefined;
}

export function amountOf(entry: LedgerEntry): { amount?: number; currency?: string } {
  return { ...(entry.amount === undefined ? {} : { amount: entry.amount }), ...(entry.currency === undefined ? {} : { currency: entry.currency }) };
}

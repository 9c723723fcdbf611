import { formatCommerceDate, type CommerceOrder, type OrderIterateOptions } from '../commerce/index.js';
import { invalidInput } from '../errors.js';
import type { Logger } from '../types.js';
import type { Ledger } from './ledger.js';
import { amountOf, checkOrder, slim, type CheckResult, type LookBehindOrder } from './check-order.js';

/** Options of `pay.reconcileOrders()`. */
export interface ReconcileOrdersOptions {
  /** The window of order creation, as for `pay.orders.iterate`: a Date, or `YYYY-MM-DD HH:MM:SS` in UTC. Both required. */
  createdFrom: string | Date;
  /** The window's end, inclusive, in the same forms as `createdFrom`. */
  createdTo: string | Date;
  /** Told about each disagreement as it is found (awaited; throwing stops the walk). */
  onFinding?: ((finding: OrderFinding) => unknown) | undefined;
  /**
   * Orders created up to this long before `createdFrom` are read too, in pages, so that a payment
   * confirmed inside the window for an order placed just before it is checked against that order (not
   * counted among the window's). The order of a payment that took longer is looked up on its own, one
   * request each. Default 24 hours.
   */
  lookbehindMs?: number | undefined;
  /** Whether the platform considers the order paid. Default: `total_paid` > 0, or state processing, complete or closed. */
  isPaid?: ((order: CommerceOrder) => boolean) | undefined;
  /** Stops the walk between pages and lookups; the call then rejects. */
  signal?: AbortSignal | undefined;
}

/** What kind of disagreement between an order and its payments a finding reports. */
export type OrderFindingKind =
  /** The service confirmed a payment, but the order is not marked paid (still awaiting payment, or canceled). */
  | 'payment_confirmed_order_unpaid'
  /** The order is marked paid, but the ledger has no confirmed payment for it. */
  | 'order_paid_without_payment'
  /** A confirmed payment's amount or currency differs from the order's grand total. */
  | 'amount_mismatch'
  /**
   * A confirmed payment whose amount or currency the ledger does not know (neither its webhook nor its
   * status answer said), so it cannot be checked against the order: a payment of another amount would pass.
   */
  | 'amount_unverified'
  /** More than one confirmed payment for one order: the shopper may have been charged twice. */
  | 'multiple_confirmed_payments'
  /** A confirmed payment whose order id matches no order read (or that names no order). */
  | 'payment_for_unknown_order';

/** One disagreement between an order and the ledger's confirmed payments. */
export interface OrderFinding {
  /** What disagrees; see OrderFindingKind. */
  kind: OrderFindingKind;
  /** The order's increment_id; for an unknown order, the order id the payment names (if any). */
  orderId?: string;
  /** The order's entity_id, when the order was read. */
  entityId?: number;
  /** The order's state and status on the platform, when the order was read. */
  orderState?: string;
  orderStatus?: string;
  /** The payment concerned; for multiple_confirmed_payments, the first of `paymentIds`. */
  paymentId?: string;
  /** Every confirmed payment of the order (multiple_confirmed_payments). */
  paymentIds?: string[];
  /** The ledger's status of `paymentId`. */
  paymentStatus?: string | null;
  /** The order's grand total in minor units. */
  expected?: { amount: number; currency: string };
  /** The payment's amount in minor units and currency, as far as the ledger knows them. */
  actual?: { amount?: number; currency?: string };
  /** One sentence for people. */
  message: string;
}

/** What `pay.reconcileOrders()` answers once the whole window is walked. */
export interface OrderReconciliationReport {
  /** The window as read, `YYYY-MM-DD HH:MM:SS` UTC. */
  createdFrom: string;
  /** The window's end as read, `YYYY-MM-DD HH:MM:SS` UTC. */
  createdTo: string;
  /** Orders created in the window. */
  orders: number;
  /** Orders marked paid with exactly one confirmed payment of the right amount, or with nothing due (a free order). */
  paid: number;
  /** Orders not marked paid and without a confirmed payment (nothing to do). */
  unpaid: number;
  /** Every disagreement, in the order found. */
  findings: OrderFinding[];
  /** Findings per kind. */
  counts: Record<OrderFindingKind, number>;
}

export interface ReconcileOrdersDeps {
  ledger: Ledger;
  iterate: (options: OrderIterateOptions) => AsyncIterable<CommerceOrder>;
  /** The order a ledger entry names, by increment_id or entity_id; undefined when the platform has none. */
  findOrder: (orderId: string, signal?: AbortSignal) => Promise<CommerceOrder | undefined>;
  logger: Logger;
  /** The ledger's clock (ms): its entries are stamped with it. */
  now: () => number;
}

const DEFAULT_LOOKBEHIND_MS = 24 * 60 * 60_000;
const PAID_STATES: ReadonlySet<string> = new Set(['processing', 'complete', 'closed']);

function defaultIsPaid(order: CommerceOrder): boolean {
  return (order.total_paid ?? 0) > 0 || PAID_STATES.has(order.state);
}

const toMs = (timestamp: string) => Date.parse(`${timestamp.replace(' ', 'T')}Z`);

/**
 * Walks the orders created in the window against the payment ledger. Ledger entries carry the order
 * id given at minting, which is the order's increment_id when minting from an order; entity_id is
 * accepted too. Reports per order: paid and confirmed (counted), confirmed but unpaid, paid without a
 * confirmed payment, amount or currency mismatch, several confirmed payments. Then the payments
 * confirmed in the window, or first seen in it, whose order was created before it are checked against
 * that order; one whose order the platform does not have is a payment for an unknown order.
 */
export async function reconcileOrders(deps: ReconcileOrdersDeps, options: ReconcileOrdersOptions): Promise<OrderReconciliationReport> {
  if (typeof options !== 'object' || options === null || options.createdFrom === undefined || options.createdTo === undefined) {
    throw invalidInput('createdFrom', 'reconcileOrders needs a window: { createdFrom, createdTo } (Dates, or YYYY-MM-DD HH:MM:SS in UTC).');
  }
  // Both cut down to the second: the ledger's times are milliseconds, so a window from 12:00:00.5 moved up to
  // 12:00:01 would miss a payment confirmed at 12:00:00.7. An order of 12:00:00 checked twice is the lesser harm.
  const createdFrom = formatCommerceDate(options.createdFrom, 'createdFrom', 'to');
  const createdTo = formatCommerceDate(options.createdTo, 'createdTo', 'to');
  if (createdFrom > createdTo) throw invalidInput('createdFrom', `createdFrom (${createdFrom}) is after createdTo (${createdTo}).`);
  const lookbehindMs = options.lookbehindMs ?? DEFAULT_LOOKBEHIND_MS;
  if (!Number.isSafeInteger(lookbehindMs) || lookbehindMs < 0) throw invalidInput('lookbehindMs', `lookbehindMs must be a whole number of milliseconds, 0 or more (got ${String(lookbehindMs)}).`);
  const isPaid = options.isPaid ?? defaultIsPaid;
  const fromMs = toMs(createdFrom);
  const toMsInclusive = toMs(createdTo) + 999;

  const report: OrderReconciliationReport = {
    createdFrom, createdTo, orders: 0, paid: 0, unpaid: 0, findings: [],
    counts: { payment_confirmed_order_unpaid: 0, order_paid_without_payment: 0, amount_mismatch: 0, amount_unverified: 0, multiple_confirmed_payments: 0, payment_for_unknown_order: 0 },
  };
  const found = async (finding: OrderFinding) => {
    report.findings.push(finding);
    report.counts[finding.kind] += 1;
    await options.onFinding?.(finding);
  };
  /** The window's orders, by either id: checked with their payments by the walk, and what that check found. */
  const ofWindow = new Map<string, { entityId: number; result: CheckResult }>();
  /**
   * Orders outside the window, by either id: those created in the look-behind, read by the walk, then those
   * looked up one by one for a payment (undefined: the platform has none). Checked when a payment names them.
   */
  const elsewhere = new Map<string, LookBehindOrder | undefined>();

  const walkFrom = new Date(Math.max(0, fromMs - lookbehindMs));
  const walkStartedAt = deps.now();
  for await (const order of deps.iterate({ createdFrom: walkFrom, createdTo, signal: options.signal })) {
    if (order.created_at < createdFrom) {
      const kept = slim(order, isPaid);
      elsewhere.set(order.increment_id, kept).set(String(order.entity_id), kept);
      continue;
    }
    report.orders += 1;
    const walked = { entityId: order.entity_id, result: await checkOrder(deps.ledger, order, isPaid(order), report, found) };
    ofWindow.set(order.increment_id, walked).set(String(order.entity_id), walked);
  }

  // The confirmed payments of the window: those confirmed (last changed) in it, whenever first seen (a
  // 3-D Secure or bank payment still pending when the run over its own window came), and those first
  // seen in it, confirmed since. Each once. The second listing reaches back over the look-behind too:
  // a Redis ledger written before the index by updatedAt existed (or by an older instance during a
  // rolling deploy) is found there.
  const listed = new Set<string>();
  const inWindow = (at: number) => at >= fromMs && at <= toMsInclusive;
  async function* confirmedInWindow() {
    yield* deps.ledger.list({ outcome: 'confirmed', updatedFrom: fromMs, updatedTo: toMsInclusive });
    for await (const entry of deps.ledger.list({ outcome: 'confirmed', firstSeenFrom: walkFrom.getTime(), firstSeenTo: toMsInclusive })) {
      if (inWindow(entry.firstSeenAt) || inWindow(entry.updatedAt)) yield entry;
    }
  }
  /** Orders outside the window already checked, and window orders checked again, by entity_id: each once. */
  const checkedElsewhere = new Set<number>();

  for await (const entry of confirmedInWindow()) {
    // The look-ups below are one request each: an abort stops them, as it stops the walk.
    options.signal?.throwIfAborted();
    if (listed.has(entry.paymentId)) continue;
    listed.add(entry.paymentId);
    const orderId = entry.orderId;
    const walked = orderId === undefined ? undefined : ofWindow.get(orderId);
    if (walked !== undefined) {
      // Checked by the walk, unless confirmed since the walk began, after its order was checked (a window not yet
      // over when the run started): checked again, with the order read afresh, and counted by that check instead.
      if (entry.updatedAt < walkStartedAt || walked.result === 'disagrees' || checkedElsewhere.has(walked.entityId)) continue;
      checkedElsewhere.add(walked.entityId);
      const fresh = await deps.findOrder(orderId!, options.signal);
      if (fresh === undefined) continue;
      report[walked.result] -= 1;
      walked.result = await checkOrder(deps.ledger, fresh, isPaid(fresh), report, found);
      continue;
    }
    // A payment confirmed in the window for an order placed before it: the run over the order's own window
    // came too early to see it, so it is checked against its order now (not counted among the window's).
    // One placed before the look-behind (a payment that took longer than lookbehindMs) is looked up.
    if (orderId !== undefined && !elsewhere.has(orderId)) {
      const match = await deps.findOrder(orderId, options.signal);
      elsewhere.set(orderId, match && slim(match, isPaid));
    }
    const order = orderId === undefined ? undefined : elsewhere.get(orderId);
    if (order !== undefined) {
      if (!checkedElsewhere.has(order.entity_id)) {
        checkedElsewhere.add(order.entity_id);
        await checkOrder(deps.ledger, order, order.paid, undefined, found);
      }
      continue;
    }
    await found({
      kind: 'payment_for_unknown_order',
      ...(orderId === undefined ? {} : { orderId }),
      paymentId: entry.paymentId,
      paymentStatus: entry.status,
      actual: amountOf(entry),
      message: orderId === undefined
        ? `Payment ${entry.paymentId} is confirmed but names no order.`
        : `Payment ${entry.paymentId} is confirmed for order ${orderId}, which the commerce platform does not have (by increment_id or entity_id).`,
    });
  }
  deps.logger.info({ createdFrom, createdTo, orders: report.orders, paid: report.paid, findings: report.findings.length }, 'order reconciliation finished');
  return report;
}

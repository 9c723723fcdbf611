import { invalidInput, PayError } from '../errors.js';
import { toMinorUnits } from '../money/index.js';
import { entriesOfOrder, type Ledger } from '../payments/ledger.js';
import type { LedgerEntry } from '../stores/ledger-store.js';
import type { MintInput } from '../payments/mint.js';
import { hookVerdict, type AuthorizeOrder, type ResolveCheckout } from '../routes/hooks.js';
import { orderNotFound, toEntityId } from './orders.js';
import type { CommerceOrder } from './schemas.js';
import type { Logger } from '../types.js';

/** Magento states in which an order still waits for its payment. */
const PAYABLE_STATES: ReadonlySet<string> = new Set(['new', 'pending_payment']);

function notPayable(order: CommerceOrder, why: string, paymentId?: string): PayError {
  return new PayError('ORDER_NOT_PAYABLE', `Order ${order.increment_id} cannot be paid: ${why}.`, {
    details: { orderId: order.increment_id, state: order.state, status: order.status, ...(paymentId === undefined ? {} : { paymentId }) },
  });
}

/**
 * What the shopper owes for `order`: its grand_total in minor units of its currency, under its
 * increment_id. Refuses (409 ORDER_NOT_PAYABLE) an order that is not awaiting payment: a state other
 * than new / pending_payment, something already paid, or nothing due.
 */
export function checkoutFromOrder(order: CommerceOrder): MintInput {
  if (!PAYABLE_STATES.has(order.state)) throw notPayable(order, `it is ${order.state} (${order.status}), not awaiting payment`);
  if ((order.total_paid ?? 0) > 0) throw notPayable(order, `${order.total_paid} ${order.order_currency_code} of it is already paid`);
  if (order.total_due === 0) throw notPayable(order, 'nothing is due on it');
  let amount: number;
  try {
    // A JSON number such as 27.06: its shortest string is the decimal the platform meant, up to 15 significant digits.
    amount = toMinorUnits(order.grand_total, order.order_currency_code);
  } catch (error) {
    throw new PayError('UPSTREAM_INVALID_RESPONSE', `Order ${order.increment_id} has a grand_total of ${order.grand_total} ${order.order_currency_code}, which is not an amount of that currency: ${(error as Error).message}`, { cause: error, details: { service: 'commerce' } });
  }
  if (amount <= 0) throw notPayable(order, 'its grand_total is 0');
  return { amount, currency: order.order_currency_code, orderId: order.increment_id };
}

/** What the mint guard reads of the payments: the ledger's entries of an order, and a fresh look at one payment. */
export interface PaymentsOfOrder extends Pick<Ledger, 'byOrder'> {
  /**
   * Asks the payment service for the payment's status now, records it, and answers the ledger's entry
   * (the one it had when the service cannot be asked).
   */
  recheck(paymentId: string): Promise<LedgerEntry | undefined>;
}

/**
 * Refuses a second charge while the ledger holds a payment for the order that is confirmed (the platform
 * has not caught up yet) or that may still confirm (the seed's needsReconciliation: "do not charge again").
 * A payment with no known status names no order. A failed one leaves the order payable again, once the
 * service says it still is failed: a confirmation outranks a failure (a bank payment approved after it
 * expired), and its webhook may have been lost.
 */
async function assertNoPaymentUnderway(payments: PaymentsOfOrder, order: CommerceOrder): Promise<void> {
  // The failed ones asked about a few at a time, not one after another (an order a shopper tried many cards on would
  // wait for each), nor all at once (a burst the service rate-limits would leave each failure standing unasked).
  const entries = await mapAtMost(await entriesOfOrder(payments, order), RECHECKS_AT_ONCE, async (listed) => (listed.outcome === 'failed' ? ((await payments.recheck(listed.paymentId)) ?? listed) : listed));
  for (const entry of entries) {
    if (entry.outcome === 'confirmed') {
      throw notPayable(order, `payment ${entry.paymentId} for it is already confirmed (${entry.status}), though the platform does not show it paid yet`, entry.paymentId);
    }
    if (entry.outcome === 'unresolved' && entry.status !== null) {
      throw notPayable(order, `payment ${entry.paymentId} for it is still ${entry.status} and may yet confirm; reconcile it (POST /payments/${entry.paymentId}/reconcile) or wait for its webhook, and mint again once it has failed`, entry.paymentId);
    }
  }
}

const RECHECKS_AT_ONCE = 4;

/** `fn` of each item, in order, with at most `limit` running at once. */
async function mapAtMost<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const at = next++;
      results[at] = await fn(items[at]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

type OrderSource = { get(entityId: number): Promise<CommerceOrder> };

/**
 * What the shopper owes for the order with this entity_id, read from the platform, with every guard:
 * refused (409) when it is not awaiting payment, or the ledger holds a payment for it that is confirmed
 * or may still confirm. `pay.checkoutForOrder`, for a `resolveCheckout` of your own to keep the guards.
 */
export async function checkoutForOrder(orders: OrderSource, payments: PaymentsOfOrder, entityId: unknown, field = 'entityId', mayPay?: (order: CommerceOrder) => Promise<void>): Promise<MintInput> {
  const order = await orders.get(toEntityId(entityId, field));
  // Before anything is said of the order (its state, a payment under way): to one who may not pay it, it does not exist.
  await mayPay?.(order);
  const checkout = checkoutFromOrder(order);
  await assertNoPaymentUnderway(payments, order);
  return checkout;
}

/**
 * The default `resolveCheckout` when the commerce platform is configured: the request body names the
 * order (`{ "order_id": <entity_id> }`), the amount and currency come from the platform, never from
 * the browser, and an order with a payment confirmed or under way in the ledger is not charged again.
 * `authorizeOrder` says whether the request may pay the order it names; without it, any caller may start a payment for
 * any order awaiting payment (and one left pending keeps its shopper from paying it): said once, as a warning.
 */
export function orderCheckoutResolver(orders: OrderSource, payments: PaymentsOfOrder, authorizeOrder: AuthorizeOrder | undefined, logger: Pick<Logger, 'warn'>): ResolveCheckout {
  let warned = false;
  return async (request) => {
    const body = request.body;
    const raw = typeof body === 'object' && body !== null ? (body as { order_id?: unknown }).order_id : undefined;
    if (raw === undefined) {
      throw invalidInput('order_id', 'Send { "order_id": <the order\'s entity_id> } to POST /widget-token; the amount comes from the commerce platform.');
    }
    if (authorizeOrder === undefined && !warned) {
      warned = true;
      logger.warn({ options: ['authorizeOrder'] }, 'POST /widget-token mints for any order whose entity_id a caller names: set authorizeOrder: (request, order) => <the order is the signed-in shopper\'s>, or a caller may start a payment for another shopper\'s order (one left pending keeps that shopper from paying it) and learn its amount. authorizeOrder: () => true keeps every order open to every caller (a pay-by-link page) without this warning.');
    }
    // Refused, the order answers as a missing one (404): nothing is said of it to one who may not pay it.
    const mayPay = authorizeOrder && ((order: CommerceOrder) => hookVerdict('authorizeOrder', () => authorizeOrder(request, order), () => orderNotFound(order.entity_id), 'let the request pay the order, or false to answer as if it did not exist (404)'));
    return checkoutForOrder(orders, payments, raw, 'order_id', mayPay);
  };
}

/**
 * The merchant's own records, standing in for your database, and what it does when an order is paid.
 * The browser names an order; the amount always comes from here, never from the request.
 */
import { PayError, toMinorUnits, type HookRequest, type LedgerEntry, type MintInput, type Pay } from 'paywidget-server';

export interface Order {
  id: string;
  total: string;
  currency: string;
  status: 'awaiting_payment' | 'paid';
  /** The payment that paid it. */
  paymentId?: string;
}

export const orders = new Map<string, Order>([
  ['1001', { id: '1001', total: '19.99', currency: 'EUR', status: 'awaiting_payment' }],
  ['1002', { id: '1002', total: '4500', currency: 'JPY', status: 'awaiting_payment' }],
  ['1003', { id: '1003', total: '12.345', currency: 'KWD', status: 'awaiting_payment' }],
]);

/**
 * `resolveCheckout` for the examples: `{ orderId }` in the body → what that order owes. Refused while the
 * payment ledger (`pay.payments`) holds a payment for the order that is confirmed or may still confirm
 * (a bank payment the shopper left pending): a reload of the page must not let them pay twice. The ledger knows
 * what a webhook or a status poll told it: a bank payment still pending in another window, which the page has not
 * reported yet (POST /payments/:id/reconcile), is not known, and a reload there can pay a second time.
 */
export async function checkoutFor(body: unknown, payments: { byOrder(orderId: string): Promise<LedgerEntry[]> }): Promise<MintInput> {
  const orderId = String((body as { orderId?: unknown } | null)?.orderId ?? '');
  const order = orders.get(orderId);
  // These orders are anyone's (the examples have no sign-in). In your shop, answer another shopper's order as this one
  // does a missing one: with it, anyone could start (and leave pending) a payment that keeps its shopper from paying.
  if (!order) throw new PayError('NOT_FOUND', `No order ${orderId || '(none given)'}: send { "orderId": "1001" }.`);
  if (order.status !== 'awaiting_payment') throw new PayError('ORDER_NOT_PAYABLE', `Order ${orderId} is already paid.`);
  const underway = (await payments.byOrder(orderId)).find((entry) => entry.outcome !== 'failed');
  if (underway) {
    throw new PayError('ORDER_NOT_PAYABLE', `Order ${orderId} has a payment that ${underway.outcome === 'confirmed' ? 'is confirmed' : 'may still be confirmed'}: please do not pay again.`, { details: { paymentId: underway.paymentId } });
  }
  return { amount: toMinorUnits(order.total, order.currency), currency: order.currency, orderId: order.id };
}

/** The route the checkout page reports a payment on when the widget could not tell its outcome. */
const RECONCILE = /^\/payments\/[^/]+\/reconcile$/;

/**
 * `authorize` for the examples. The shopper's browser asks for its widget token (the amount comes from
 * your records, so that route is open), and reports a payment whose outcome the widget could not tell
 * (POST /payments/:id/reconcile), so the ledger knows of it before the shopper can pay again. That route
 * answers the payment's order id and amount, and polls the payment service for up to 10 s: in your shop,
 * let only a signed-in shopper call it, rate-limit it, and check the payment's order is theirs. The other
 * /payments routes are for staff: closed until you put your own check here, e.g.
 * `return request.header('authorization') === …`.
 */
export function authorizeRequest(request: HookRequest): boolean {
  // The library answers a path with a trailing slash as the path without it: so does this check.
  const path = request.path.length > 1 ? request.path.replace(/\/$/, '') : request.path;
  return path === '/widget-token' || (request.method === 'POST' && RECONCILE.test(path));
}

interface PaymentEventData {
  order_id: string;
  payment_id: string;
  amount: number;
  currency: string;
}

/**
 * The merchant's webhook handlers: mark the order paid when its payment succeeds, and fulfil it once.
 * A payment that does not match an order awaiting it is acknowledged but not fulfilled: someone must
 * look at it (throwing would only make the payment service send it again, forever). A handler that
 * throws answers the delivery 500, so the payment service retries it.
 */
export function handleWebhooks(pay: Pay): void {
  pay.webhooks.on('payment.succeeded', ({ id, payload }) => {
    const { order_id: orderId, payment_id: paymentId, amount, currency } = (payload as { data: PaymentEventData }).data;
    // Returned: when fulfil writes to your database, a failed write then fails the delivery, and the sender retries it.
    return fulfil({ orderId, paymentId, amount, currency }, `webhook ${id}`);
  });
  // A handler that throws is logged by the library itself (an error, with the event id); pay.webhooks.onError is
  // where an alert or a metric would go.
}

/**
 * Marks the order paid and fulfils it, once, for a confirmed payment of what it owes; anything else is logged
 * for someone to look into. Here the records are a Map, changed at once; on a database, make the change one
 * conditional update (`… SET status = 'paid' WHERE id = ? AND status = 'awaiting_payment'`), or two deliveries
 * of one payment racing each other could both fulfil.
 */
function fulfil({ orderId, paymentId, amount, currency }: { orderId: string | undefined; paymentId: string; amount: number | undefined; currency: string | undefined }, how: string): void {
  const paid = `${how}: payment ${paymentId} of ${amount ?? '?'} ${currency ?? '?'} (minor units) succeeded`;
  const order = orderId === undefined ? undefined : orders.get(orderId);
  if (!order) return console.warn(`${paid} for order ${orderId ?? '(none named)'}, which these records do not have: not fulfilled, look into it.`);
  const owed = toMinorUnits(order.total, order.currency);
  // The order's total may have changed after its token was minted: fulfil only what was paid in full.
  if (amount !== owed || currency !== order.currency) {
    return console.warn(`${paid} for order ${order.id}, which owes ${owed} ${order.currency}: not fulfilled, look into it.`);
  }
  if (order.paymentId === paymentId) return console.log(`${paid}: order ${order.id} was fulfilled for it already.`);
  if (order.status === 'paid') return console.warn(`${paid} for order ${order.id}, which another payment paid already: a second payment to refund.`);
  order.status = 'paid';
  order.paymentId = paymentId;
  console.log(`${paid}: fulfil order ${order.id}.`);
}

/**
 * Every few minutes, asks the payment service about the payments still unresolved in the ledger, and fulfils
 * those a poll of this sweep found confirmed: the webhook of such a payment may never come (its handlers run
 * if it does, and find the order fulfilled). Then it looks for orders still awaiting payment that the ledger
 * holds a confirmed payment for: one the checkout page's reconcile call found confirmed, whose webhook never
 * came, is fulfilled here. Returns the function that stops it, for shutdown.
 */
export function sweepPayments(pay: Pay, everyMs = 5 * 60_000): () => void {
  const sweep = async () => {
    try {
      await pay.payments.reconcilePending({
        olderThanMs: 60_000, // a payment a minute old or more: younger ones are still being paid or polled
        onChange: async ({ paymentId, outcome, source }) => {
          if (outcome !== 'confirmed' || source !== 'poll') return; // a webhook's handlers saw to it
          const entry = await pay.payments.get(paymentId);
          fulfil({ paymentId, orderId: entry?.orderId, amount: entry?.amount, currency: entry?.currency }, 'sweep');
        },
      });
      // On a database: the orders awaiting payment for more than a minute, a page at a time.
      for (const order of [...orders.values()].filter((o) => o.status === 'awaiting_payment')) {
        const confirmed = (await pay.payments.byOrder(order.id)).find((entry) => entry.outcome === 'confirmed');
        if (confirmed) fulfil({ paymentId: confirmed.paymentId, orderId: order.id, amount: confirmed.amount, currency: confirmed.currency }, 'sweep');
      }
    } catch (error) {
      console.error('payment sweep failed; the next one tries again:', (error as Error).message);
    }
  };
  const timer = setInterval(() => void sweep(), everyMs);
  return () => clearInterval(timer);
}

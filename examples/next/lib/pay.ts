import { createPay } from 'paywidget-server';
import { checkoutFor, orders } from '../../shared/orders';

/** One instance per server process; configured from PAY_* environment variables. */
export const pay = createPay({
  // The browser sends { orderId }; what it owes comes from the merchant's own records.
  resolveCheckout: ({ body }) => checkoutFor(body),
});

pay.webhooks.on('payment.succeeded', ({ id, payload }) => {
  const { order_id: orderId, payment_id: paymentId } = (payload as { data: { order_id: string; payment_id: string } }).data;
  const order = orders.get(orderId);
  if (order) order.status = 'paid';
  console.log(`webhook ${id}: payment ${paymentId} succeeded, fulfil order ${orderId}`);
});
pay.webhooks.onError(({ error, event }) => console.error(`webhook ${event.id} failed, the sender will retry:`, error.message));

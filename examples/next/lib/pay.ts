import { createPay } from 'paywidget-server';
import { authorizeRequest, checkoutFor, handleWebhooks } from '../../shared/orders';

/** One instance per server process; configured from PAY_* environment variables. */
export const pay = createPay({
  // The browser sends { orderId }; what it owes comes from the merchant's own records.
  resolveCheckout: ({ body }) => checkoutFor(body, pay.payments),
  // The /payments routes stay closed until you wire your own check into authorizeRequest.
  authorize: authorizeRequest,
});

handleWebhooks(pay);

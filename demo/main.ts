/**
 * The main job on the embedded sandbox: start a fake payment service on this machine,
 * mint a widget token for an order through the library, and show what the merchant gets.
 * Run it with `npm run demo`; nothing leaves 127.0.0.1.
 */
import { createPay, toMinorUnits } from 'paywidget-server';
import { startSandbox } from 'paywidget-server/sandbox';

const sandbox = await startSandbox();
try {
  console.log(`Sandbox payment service listening on ${sandbox.paymentUrl} (merchant ${sandbox.merchantId})`);

  const pay = createPay({
    payment: { apiUrl: sandbox.paymentUrl, merchantId: sandbox.merchantId, apiKey: sandbox.apiKey, webhookSecret: sandbox.webhookSecret },
    env: {},
  });

  const order = { id: '000000042', total: '19.99', currency: 'EUR' };
  const amount = toMinorUnits(order.total, order.currency);
  console.log(`Order ${order.id} owes ${order.total} ${order.currency}: ${amount} minor units, decided on the server.`);

  const token = await pay.mintWidgetToken({ amount, currency: order.currency, orderId: order.id });
  console.log(`Minted a one-time widget token: ${token.widgetToken}`);
  console.log(`It expires at ${token.expiresAt.toISOString()}; hand it to PayWidget.mount() on the checkout page.`);
  console.log(`Logged as an object it stays hidden: ${JSON.stringify(token)}`);
} finally {
  await sandbox.close();
}

/**
 * Run: PAY_API_URL=… PAY_MERCHANT_ID=… PAY_MERCHANT_API_KEY=… PAY_WEBHOOK_SECRET=… npx tsx examples/koa/server.ts
 * or against the embedded sandbox: npx tsx examples/with-sandbox.ts koa
 */
import { bodyParser } from '@koa/bodyparser';
import Koa from 'koa';
import { createPay } from 'paywidget-server';
import { payRouter } from 'paywidget-server/koa';
import { authorizeRequest, checkoutFor, handleWebhooks, sweepPayments } from '../shared/orders.js';
import { stopOnSigterm } from '../shared/shutdown.js';

const pay = createPay({
  // The browser sends { orderId }; what it owes comes from the merchant's own records.
  resolveCheckout: ({ body }) => checkoutFor(body, pay.payments),
  // The /payments routes stay closed until you wire your own check into authorizeRequest.
  authorize: authorizeRequest,
});

handleWebhooks(pay);
// Payments whose webhook never came are asked about every few minutes, and fulfilled when confirmed.
const stopSweeps = sweepPayments(pay);

const app = new Koa();
// The library's routes come first, so webhooks reach it with their raw bytes.
app.use(payRouter(pay, { prefix: '/pay' }).routes());
// Your own JSON routes come after it (ctx.request.body).
app.use(bodyParser());
app.use((ctx) => {
  if (ctx.path === '/health') ctx.body = { ok: true };
});

const port = Number(process.env.PORT ?? 3002);
const server = app
  .listen(port, '127.0.0.1', () => {
    console.log(`Merchant backend on http://127.0.0.1:${port}: POST /pay/widget-token, POST /pay/webhooks`);
  })
  .on('error', (error) => {
    console.error(`Cannot listen on 127.0.0.1:${port} (${error.message}); choose another port with PORT=…`);
    process.exit(1);
  });

stopOnSigterm(server, pay, stopSweeps);

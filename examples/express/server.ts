/**
 * Run: PAY_API_URL=… PAY_MERCHANT_ID=… PAY_MERCHANT_API_KEY=… PAY_WEBHOOK_SECRET=… npx tsx examples/express/server.ts
 * or against the embedded sandbox: npx tsx examples/with-sandbox.ts express
 * Several instances behind a load balancer: set REDIS_URL, and they share one state in Redis.
 */
import { Redis } from 'ioredis';
import { createPay } from 'paywidget-server';
import { redisStores } from 'paywidget-server/redis';
import { authorizeRequest, checkoutFor, handleWebhooks, sweepPayments } from '../shared/orders.js';
import { stopOnSigterm } from '../shared/shutdown.js';
import { createApp } from './app.js';

const redisUrl = process.env.REDIS_URL;
// Commands fail fast while Redis is down (webhooks get 503 and are sent again); ioredis reconnects by itself.
const redis = redisUrl ? new Redis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 0 }) : undefined;
// Without a listener, ioredis prints every failed reconnection as an unhandled error event: say it once instead.
let redisDown = false;
redis?.on('error', (error: Error) => {
  if (!redisDown) console.error(`Redis unreachable (${error.message}): webhooks are answered 503, and sent again, until it is back.`);
  redisDown = true;
});
redis?.on('ready', () => {
  if (redisDown) console.log('Redis is back.');
  redisDown = false;
});
const pay = createPay({
  // Webhook claims, payment ledger, admin token: in Redis when REDIS_URL is set.
  stores: redis ? redisStores(redis) : undefined,
  // The browser sends { orderId }; what it owes comes from the merchant's own records.
  resolveCheckout: ({ body }) => checkoutFor(body, pay.payments),
  // The /payments routes stay closed until you wire your own check into authorizeRequest.
  authorize: authorizeRequest,
});

handleWebhooks(pay);
// Payments whose webhook never came are asked about every few minutes, and fulfilled when confirmed.
const stopSweeps = sweepPayments(pay);

const port = Number(process.env.PORT ?? 3001);
const server = createApp(pay).listen(port, '127.0.0.1', (error?: Error) => {
  // Express 5 hands a failed listen (the port in use) to this callback instead of throwing it.
  if (error) {
    console.error(`Cannot listen on 127.0.0.1:${port} (${error.message}); choose another port with PORT=…`);
    process.exit(1);
  }
  console.log(`Merchant backend on http://127.0.0.1:${port}: POST /pay/widget-token, POST /pay/webhooks`);
  console.log(`Checkout page: http://127.0.0.1:${port}/checkout?orderId=1001`);
});

// The Redis client is yours to close, once the library's last writes landed.
stopOnSigterm(server, pay, stopSweeps, async () => redis?.quit());

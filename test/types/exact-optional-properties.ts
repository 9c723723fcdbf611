/**
 * Compiled by `npm run typecheck` with exactOptionalPropertyTypes: an option left undefined is absent
 * to the library, so code that passes on a value that may be missing (an environment variable, an
 * optional field) compiles without spreading it in conditionally.
 */
import { createPay, type OrderSyncOptions } from 'paywidget-server';
import { startSandbox } from 'paywidget-server/sandbox';
import { signWebhook } from 'paywidget-server/testing';

declare const maybe: { text?: string; number?: number; signal?: AbortSignal };

export async function optionalValuesPassedOn(): Promise<void> {
  const pay = createPay({
    payment: { apiUrl: maybe.text, merchantId: maybe.text, apiKey: maybe.text, webhookSecret: maybe.text },
    commerce: { url: maybe.text, username: maybe.text, password: maybe.text, scope: maybe.text },
    http: { attemptTimeoutMs: maybe.number, maxRetries: maybe.number },
    webhooks: { toleranceSeconds: maybe.number, leaseMs: maybe.number },
    payments: { pollBudgetMs: maybe.number },
    maxBodyBytes: maybe.number,
    logger: undefined,
  });
  await pay.payments.reconcile('pay_1', { clientToken: maybe.text, budgetMs: maybe.number, signal: maybe.signal });
  await pay.orders.get(1, { signal: maybe.signal });
  await pay.orders.search({ status: maybe.text, createdFrom: maybe.text, pageSize: maybe.number });
  const sync: OrderSyncOptions = { checkpoint: 'nightly', onOrder: () => {}, pageSize: maybe.number, signal: maybe.signal };
  await pay.orders.sync(sync);
  await pay.drain({ timeoutMs: maybe.number });
  await startSandbox({ port: maybe.number, webhookUrl: maybe.text });
  signWebhook({ payload: {}, secret: 'whsec', eventId: maybe.text, timestamp: maybe.number });
}

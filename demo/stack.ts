/**
 * Everything the demo runs, in this one process, on 127.0.0.1: the sandbox (payment service, commerce
 * platform, widget host) and the Express example (examples/express/app.ts) with a pay instance that reads
 * orders from the commerce platform and receives the sandbox's signed webhooks.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPay, silentLogger, type Pay, type WebhookEvent } from 'paywidget-server';
import { startSandbox, type Sandbox } from 'paywidget-server/sandbox';
import { createApp } from '../examples/express/app.js';

export interface DemoStack {
  readonly sandbox: Sandbox;
  readonly pay: Pay;
  /** The merchant backend (the Express example): `http://127.0.0.1:<port>`. */
  readonly merchantUrl: string;
  /** Its webhook route, where the sandbox posts: `<merchantUrl>/pay/webhooks`. */
  readonly webhookUrl: string;
  /** How many times the merchant's handlers ran for this event id. */
  handlerRuns(eventId: string): number;
  /** Told after the merchant's handler ran for an event. */
  onHandled(listener: (event: WebhookEvent) => void): void;
  /** The sandbox's card confirmation delay the demo runs with. */
  readonly confirmDelayMs: number;
  close(): Promise<void>;
}

export interface DemoStackOptions {
  /** Port of the merchant backend (default 0, an ephemeral one). */
  port?: number;
}

/** A succeeding card payment stays `processing` this long, so the status poll has something to wait for. */
const CONFIRM_DELAY_MS = 300;

export async function startDemoStack(options: DemoStackOptions = {}): Promise<DemoStack> {
  const sandbox = await startSandbox({
    confirmDelayMs: CONFIRM_DELAY_MS,
    commerce: { orders: 200, seed: 1 },
    webhookRetry: { baseDelayMs: 50 },
  });

  // What the shop minted for, by the order reference the payment service reports back (increment_id).
  const minted = new Map<string, { entityId: number }>();
  const pay: Pay = createPay({
    payment: { apiUrl: sandbox.paymentUrl, merchantId: sandbox.merchantId, apiKey: sandbox.apiKey, webhookSecret: sandbox.webhookSecret },
    commerce: { url: sandbox.commerceUrl, username: sandbox.commerceUsername, password: sandbox.commercePassword },
    env: {}, // nothing from this machine's environment: the demo runs the same everywhere
    logger: silentLogger, // the demo narrates what happens in its own words
    payments: { pollBudgetMs: 1000 },
    // The checkout page names the order by its entity_id ({ "orderId": "10" }); what it owes is read from
    // the commerce platform, and an order that is not awaiting payment, or has a payment confirmed or under
    // way in the ledger, is refused (409 ORDER_NOT_PAYABLE).
    resolveCheckout: async ({ body }) => {
      const entityId = String((body as { orderId?: unknown } | null)?.orderId ?? '');
      const checkout = await pay.checkoutForOrder(entityId);
      minted.set(checkout.orderId, { entityId: Number(entityId) });
      return checkout;
    },
  });

  const runs = new Map<string, number>();
  const listeners: Array<(event: WebhookEvent) => void> = [];
  pay.webhooks.on('payment.succeeded', async ({ payload }) => {
    // Fulfilment. A real shop would invoice the order on its platform; the Order Retrieval API only
    // reads, so the demo marks it paid in the sandbox's records.
    const orderId = (payload as { data?: { order_id?: string } }).data?.order_id;
    // The order minted for; one minted before a restart is not in the map, and is found by its order number.
    const entityId = orderId === undefined ? undefined : minted.get(orderId)?.entityId ?? (await pay.orders.search({ incrementId: orderId, pageSize: 1 })).items[0]?.entity_id;
    const grandTotal = entityId === undefined ? undefined : sandbox.commerce.order(entityId)?.grand_total;
    if (entityId !== undefined && grandTotal !== undefined) {
      sandbox.commerce.setOrder(entityId, {
        state: 'processing', status: 'processing', total_paid: grandTotal, base_total_paid: grandTotal, total_due: 0, base_total_due: 0,
      });
    }
  });
  pay.webhooks.onAny((event) => {
    runs.set(event.id, (runs.get(event.id) ?? 0) + 1);
    for (const listener of listeners) listener(event);
  });

  const app = createApp(pay, { widget: { widgetHost: sandbox.widgetUrl, integrity: sandbox.widgetIntegrity, apiUrl: sandbox.paymentUrl } });
  let server: Server;
  try {
    server = await new Promise<Server>((resolve, reject) => {
      const s = app.listen(options.port ?? 0, '127.0.0.1');
      s.once('listening', () => resolve(s)).once('error', reject);
    });
  } catch (error) {
    await sandbox.close();
    throw error;
  }
  const merchantUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const webhookUrl = `${merchantUrl}/pay/webhooks`;
  sandbox.setWebhookUrl(webhookUrl);

  return {
    sandbox,
    pay,
    merchantUrl,
    webhookUrl,
    handlerRuns: (eventId) => runs.get(eventId) ?? 0,
    onHandled: (listener) => void listeners.push(listener),
    confirmDelayMs: CONFIRM_DELAY_MS,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await sandbox.close();
    },
  };
}

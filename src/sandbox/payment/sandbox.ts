import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { startCommerce } from '../commerce/sandbox.js';
import { Router } from '../shared/router.js';
import { SandboxServer } from '../shared/server.js';
import { startWidgetHost, WIDGET_INTEGRITY } from '../widget/server.js';
import { addApiRoutes } from './api.js';
import { ShopperStore, TEST_CARDS, TEST_SHOPPER_EMAIL } from './cards.js';
import type { SandboxContext } from './context.js';
import { addControlRoutes, createTestPayment } from './control.js';
import { applyCors } from './cors.js';
import { FaultSet, serveFault } from './faults.js';
import { PaymentStore } from './payments.js';
import { TokenStore } from './tokens.js';
import type { Sandbox, SandboxOptions } from './types.js';
import { WebhookSender } from './webhooks.js';
import { MAX_TIMER_MS } from '../../core/max-timer.js';
import { redacted } from '../../core/secret.js';
import { checkSandboxOptions } from '../options.js';

function positive(name: string, value: number): number {
  if (nonNegative(name, value) === 0) throw new TypeError(`${name} must be above 0`);
  return value;
}

function nonNegative(name: string, value: number): number {
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0) throw new TypeError(`${name} must be a non-negative number`);
  return value;
}

/** A time a timer holds (MAX_TIMER_MS): past it Node fires at once, and node:http refuses it outright. */
function timerMs(name: string, value: number): number {
  if (value > MAX_TIMER_MS) throw new TypeError(`${name} must be at most ${MAX_TIMER_MS} ms, what a timer holds (got ${value})`);
  return value;
}

/** The widget's poll budget: a whole number of milliseconds a browser timer can hold (1 to 2^31 - 1). */
function pollBudget(value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || value < 1 || value > MAX_TIMER_MS) throw new TypeError(`widgetPollBudgetMs must be a whole number of milliseconds from 1 to ${MAX_TIMER_MS}`);
  return value;
}

/** Starts the fake payment service on 127.0.0.1. */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  checkSandboxOptions(options);
  const widgetPollBudgetMs = pollBudget(options.widgetPollBudgetMs); // checked before anything is started
  // Read at each call, not the function at start: fake timers that replace Date (vi.useFakeTimers) move it too.
  const now = options.now ?? (() => Date.now());
  const merchantId = options.merchantId ?? 'merchant_sandbox';
  const apiKey = options.apiKey ?? `sk_test_${randomBytes(16).toString('hex')}`;
  const webhookSecret = options.webhookSecret ?? `whsec_${randomBytes(24).toString('hex')}`;
  const attempts = options.webhookRetry?.attempts ?? 5;
  if (!Number.isSafeInteger(attempts) || attempts < 1) throw new TypeError('webhookRetry.attempts must be a positive integer');
  const duplicates = options.duplicateWebhooks ?? 0;
  if (!Number.isSafeInteger(duplicates) || duplicates < 0) throw new TypeError('duplicateWebhooks must be a non-negative integer');

  const webhooks = new WebhookSender({
    secret: webhookSecret,
    now,
    url: options.webhookUrl,
    attempts,
    baseDelayMs: timerMs('webhookRetry.baseDelayMs', nonNegative('webhookRetry.baseDelayMs', options.webhookRetry?.baseDelayMs ?? 100)),
    // 0 would mean "no time-out" to node:http, and a receiver that never answers would hold its delivery for ever.
    timeoutMs: timerMs('webhookRetry.timeoutMs', positive('webhookRetry.timeoutMs', options.webhookRetry?.timeoutMs ?? 5000)),
    duplicates,
  });
  const payments = new PaymentStore(now, (payment) => void webhooks.paymentEvent(payment), nonNegative('confirmDelayMs', options.confirmDelayMs ?? 0));
  const router = new Router();
  const faults = new FaultSet(router);
  let baseUrl = '';
  const context: SandboxContext = {
    merchantId,
    apiKey,
    payByBankEligible: options.payByBankEligible ?? true,
    statusAcceptsMerchantCredentials: options.statusAcceptsMerchantCredentials ?? true,
    now,
    tokens: new TokenStore(now),
    shoppers: new ShopperStore(now()),
    payments,
    faults,
    baseUrl: () => baseUrl,
  };

  addApiRoutes(router, context);
  addControlRoutes(router, context);
  let widgetOrigin = '';
  const server: SandboxServer = new SandboxServer(router, async (method, path, res) => {
    if (applyCors(widgetOrigin, method, path, res)) return true; // the widget frame's preflight
    return serveFault(server, faults, method, path, res);
  });
  baseUrl = await server.listen(options.port ?? 0);
  const commerce = await startCommerce(options.commerce ?? {}, now).catch(async (error: unknown) => {
    await server.close();
    throw error;
  });
  const widget = await startWidgetHost(baseUrl, options.widgetPort ?? 0, widgetPollBudgetMs).catch(async (error: unknown) => {
    await Promise.all([server.close(), commerce.close()]);
    throw error;
  });
  widgetOrigin = widget.url;

  const sandbox: Sandbox = {
    paymentUrl: baseUrl,
    merchantId,
    apiKey,
    webhookSecret,
    testCards: TEST_CARDS,
    testShopper: Object.freeze({ email: TEST_SHOPPER_EMAIL, savedPaymentMethodIds: Object.freeze(context.shoppers.cards(TEST_SHOPPER_EMAIL).map((c) => c.id)) }),
    setWebhookUrl: (url) => webhooks.setUrl(url),
    faults,
    payments: {
      get: (id) => payments.snapshot(id),
      list: () => payments.list(),
      setStatus: (id, status) => payments.setStatus(id, status),
      setConfirmDelay: (ms) => {
        payments.confirmDelayMs = nonNegative('confirmDelayMs', ms);
      },
      create: (input) => payments.snapshot(createTestPayment(payments, input).id)!,
    },
    webhooks: { delivered: webhooks.delivered, events: webhooks.events, idle: () => webhooks.idle() },
    commerceUrl: commerce.url,
    commerceUsername: commerce.username,
    commercePassword: commerce.password,
    commerce: commerce.control,
    widgetUrl: widget.url,
    widgetIntegrity: WIDGET_INTEGRITY,
    close: async () => {
      payments.close();
      webhooks.close();
      await Promise.all([server.close(), commerce.close(), widget.close()]);
      await webhooks.idle();
    },
  };
  // The API key, signing secret and admin password stay out of logs and JSON.
  const visible = () => ({ paymentUrl: baseUrl, merchantId, apiKey: redacted, webhookSecret: redacted, commerceUrl: commerce.url, commerceUsername: commerce.username, commercePassword: redacted, widgetUrl: widget.url });
  Object.defineProperties(sandbox, {
    toJSON: { value: visible, enumerable: false },
    [inspect.custom]: { value: () => `Sandbox ${inspect(visible())}`, enumerable: false },
  });
  return sandbox;
}

import { createOrders, orderCheckoutResolver, unconfiguredOrders, type Orders } from './commerce/index.js';
import { COMMERCE_REQUIRED, requirePayment, requireWebhookSecrets, resolveConfig, type ConfigOptions, type ResolvedConfig } from './config.js';
import { checkOptionKeys } from './option-keys.js';
import { createPayments, resolvePaymentsOptions, type Payments, type PaymentsOptions } from './payments/index.js';
import { mintWidgetToken, type MintInput } from './payments/mint.js';
import { reconcileOrders, type OrderReconciliationReport, type ReconcileOrdersOptions } from './payments/reconcile-orders.js';
import type { WidgetToken } from './payments/widget-token.js';
import { createRouter, type Router } from './router.js';
import { paymentRoute, reconcileRoute } from './routes/payments.js';
import { widgetTokenRoute, type Authorize, type ResolveCheckout } from './routes/widget-token.js';
import { consoleLogger } from './logger.js';
import type { Logger } from './types.js';
import { MemoryClaimStore, MemoryLedgerStore, type StoreOptions } from './stores/index.js';
import { createWebhooks, type WebhookOptions, type Webhooks } from './webhooks/index.js';

export interface PayOptions extends ConfigOptions {
  /**
   * Decides what the shopper owes for a `POST /widget-token` request, from the server's own records.
   * Without it, a configured commerce platform decides: the body names the order (`{ order_id }`).
   */
  resolveCheckout?: ResolveCheckout;
  /** Runs before every route that acts for a shopper; return false to answer 401. */
  authorize?: Authorize;
  /** pino-compatible; by default warnings and errors go to the console (`silentLogger` mutes the library). */
  logger?: Logger;
  /** Clock in milliseconds, for tests. */
  now?: () => number;
  /** Largest request body the routes read, in bytes (1 MiB by default); past it they answer 413. */
  maxBodyBytes?: number;
  /** Webhook verification and deduplication (tolerance, body limit, retention, lease, event type). */
  webhooks?: WebhookOptions;
  /** Shared state; in memory by default (one instance). */
  stores?: StoreOptions;
  /** Payment status reads and reconciliation (terminal statuses, status credential, poll budget, webhook extractor). */
  payments?: PaymentsOptions;
}

export interface Pay extends Router {
  readonly config: ResolvedConfig;
  readonly maxBodyBytes: number;
  mintWidgetToken(input: MintInput): Promise<WidgetToken>;
  readonly webhooks: Webhooks;
  /** The merchant's orders on the commerce platform; CONFIG_MISSING at first use when it is not configured. */
  readonly orders: Orders;
  /** Payment status, reconciliation and the payment ledger. */
  readonly payments: Payments;
  /** Cross-checks the orders created in a window against the confirmed payments in the ledger. */
  reconcileOrders(options: ReconcileOrdersOptions): Promise<OrderReconciliationReport>;
}

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** The object every part of the library hangs off. Options fall back to environment variables. */
export function createPay(options: PayOptions = {}): Pay {
  checkOptionKeys(options);
  const config = resolveConfig(options);
  const logger = options.logger ?? consoleLogger;
  const now = options.now ?? Date.now;

  const mint = async (input: MintInput) => mintWidgetToken({ payment: requirePayment(config), http: config.http, logger, now }, input);
  const payments = createPayments({
    policy: resolvePaymentsOptions(options.payments),
    store: options.stores?.ledger ?? new MemoryLedgerStore(),
    payment: () => requirePayment(config),
    http: config.http,
    logger,
    now,
  });
  const webhooks = createWebhooks({
    secrets: () => requireWebhookSecrets(config),
    options: { maxBodyBytes: options.maxBodyBytes, ...options.webhooks },
    store: options.stores?.claims ?? new MemoryClaimStore({ now }),
    logger,
    now,
    internalHandlers: [payments.recordWebhook],
  });
  const orders = config.commerce
    ? createOrders(config.commerce, { http: config.http, logger, now, stores: options.stores })
    : unconfiguredOrders(config.commerceMissing);
  // A platform named in part still resolves from orders: the order read then names what is missing.
  const commerceNamed = config.commerceMissing.length < COMMERCE_REQUIRED.length;
  const resolveCheckout = options.resolveCheckout ?? (commerceNamed ? orderCheckoutResolver(orders, payments.ledger) : undefined);
  const router = createRouter([
    widgetTokenRoute({ authorize: options.authorize, resolveCheckout, mint }),
    webhooks.route,
    reconcileRoute({ authorize: options.authorize, reconcile: payments.reconcile, lookup: payments.get }),
    paymentRoute({ authorize: options.authorize, reconcile: payments.reconcile, lookup: payments.get }),
  ], logger);

  return {
    config,
    maxBodyBytes: Math.max(options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES, options.webhooks?.maxBodyBytes ?? 0),
    mintWidgetToken: mint,
    webhooks,
    orders,
    payments: { status: payments.status, reconcile: payments.reconcile, reconcilePending: payments.reconcilePending, get: payments.get, byOrder: payments.byOrder },
    reconcileOrders: (reconcileOptions) => reconcileOrders({ ledger: payments.ledger, iterate: (o) => orders.iterate(o), logger }, reconcileOptions),
    routes: router.routes,
    matches: router.matches,
    allowedMethods: router.allowedMethods,
    handle: router.handle,
  };
}

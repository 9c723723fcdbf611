import { findOrderById } from './commerce/find-order.js';
import { checkoutForOrder, createOrders, orderCheckoutResolver, unconfiguredOrders, type Orders } from './commerce/index.js';
import { COMMERCE_REQUIRED, requirePayment, requireWebhookSecrets, resolveConfig, type ConfigOptions, type ResolvedConfig } from './config.js';
import { PayError } from './errors.js';
import { checkOptionKeys } from './option-keys.js';
import { checkOptionsObject, checkOptionTypes } from './option-types.js';
import { createPayments, resolvePaymentsOptions, type Payments, type PaymentsOptions } from './payments/index.js';
import { mintWidgetToken, type MintInput } from './payments/mint.js';
import { reconcileOrders, type OrderReconciliationReport, type ReconcileOrdersOptions } from './payments/reconcile-orders.js';
import type { WidgetToken } from './payments/widget-token.js';
import { createRouter, type Router } from './router.js';
import { paymentRoute, reconcileRoute } from './routes/payments.js';
import type { Authorize, AuthorizeOrder, ResolveCheckout } from './routes/hooks.js';
import { widgetTokenRoute } from './routes/widget-token.js';
import { consoleLogger, guardedLogger } from './logger.js';
import type { Logger } from './types.js';
import { MemoryClaimStore, MemoryLedgerStore, type StoreOptions } from './stores/index.js';
import { claimStores } from './stores/store-owners.js';
import { createWebhooks, type DrainOptions, type WebhookOptions, type Webhooks } from './webhooks/index.js';

/**
 * Everything `createPay` takes; all of it optional. Credentials fall back to environment variables
 * (`PAY_API_URL`, `PAY_MERCHANT_ID`, `PAY_MERCHANT_API_KEY`, `PAY_WEBHOOK_SECRET`, `COMMERCE_*`).
 */
export interface PayOptions extends ConfigOptions {
  /**
   * Decides what the shopper owes for a `POST /widget-token` request, from the server's own records.
   * Without it, a configured commerce platform decides: the body names the order (`{ order_id }`).
   */
  resolveCheckout?: ResolveCheckout | undefined;
  /** Runs before every route that acts for a shopper; return true to let the request through, false to answer 401. */
  authorize?: Authorize | undefined;
  /**
   * Without resolveCheckout, with the commerce platform: whether the request may pay the order it names, given the
   * order read (typically, that it is the signed-in shopper's); false answers 404 ORDER_NOT_FOUND, as for no order.
   */
  authorizeOrder?: AuthorizeOrder | undefined;
  /** pino-compatible; by default warnings and errors go to the console (`silentLogger` mutes the library). */
  logger?: Logger | undefined;
  /** Clock in milliseconds, for tests. */
  now?: (() => number) | undefined;
  /**
   * Largest request body the JSON routes read, in bytes (1 MiB by default); past it they answer 413.
   * Webhooks take it too, unless `webhooks.maxBodyBytes` sets theirs.
   */
  maxBodyBytes?: number | undefined;
  /** Webhook verification and deduplication (tolerance, body limit, retention, lease, event type). */
  webhooks?: WebhookOptions | undefined;
  /** Shared state; in memory by default (one instance). */
  stores?: StoreOptions | undefined;
  /** Payment status reads and reconciliation (terminal statuses, status credential, poll budget, webhook extractor). */
  payments?: PaymentsOptions | undefined;
}

/**
 * The library, configured: its routes for an adapter (`payMiddleware`, `createRouteHandlers`, `payRouter`),
 * and the same work as calls for your own code.
 */
export interface Pay extends Router {
  /** The options once checked, environment fallbacks applied; the secrets in it never print. */
  readonly config: ResolvedConfig;
  /** The largest body any route takes; each route holds its own (`bodyLimit`), which the adapters read up to. */
  readonly maxBodyBytes: number;
  /**
   * Mints a widget token for this amount (minor units), currency and order, with the merchant credentials.
   * A refusal by the service throws UpstreamError carrying its status and body unchanged.
   */
  mintWidgetToken(input: MintInput): Promise<WidgetToken>;
  /** Webhook verification, deduplication and your handlers: `pay.webhooks.on('payment.succeeded', …)`. */
  readonly webhooks: Webhooks;
  /** The merchant's orders on the commerce platform; CONFIG_MISSING at first use when it is not configured. */
  readonly orders: Orders;
  /** Payment status, reconciliation and the payment ledger. */
  readonly payments: Payments;
  /** Cross-checks the orders created in a window against the confirmed payments in the ledger. */
  reconcileOrders(options: ReconcileOrdersOptions): Promise<OrderReconciliationReport>;
  /**
   * What the shopper owes for the order with this entity_id, read from the commerce platform: refused
   * (409 ORDER_NOT_PAYABLE) when it is not awaiting payment, or a payment for it in the ledger is
   * confirmed or may still confirm. What `POST /widget-token` mints by default; call it from a
   * `resolveCheckout` of your own to keep those guards (`checkoutFromOrder` alone checks only the order).
   */
  checkoutForOrder(entityId: number | string): Promise<MintInput>;
  /**
   * For a clean shutdown, once your server stopped taking requests and before you quit your Redis client:
   * waits for the webhook claim writes the library retries in the background after a store failure (an
   * event's done mark, which stops a duplicate delivery from running it again). Each lasts until it
   * lands or its lease ends (`webhooks.leaseMs`); `{ timeoutMs }` bounds the wait to your shutdown grace period.
   * Resolves at once when there is none. It closes nothing.
   */
  drain(options?: DrainOptions): Promise<void>;
}

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** `maxBodyBytes`, checked here: webhooks.maxBodyBytes, when set, takes its place there and so its check. */
function bodyLimit(value: number | undefined): number {
  if (value === undefined) return DEFAULT_MAX_BODY_BYTES;
  if (Number.isSafeInteger(value) && value > 0) return value;
  throw new PayError('CONFIG_INVALID', 'paywidget-server configuration: maxBodyBytes must be a positive whole number of bytes.', { details: { options: ['maxBodyBytes'] } });
}

/** The object every part of the library hangs off. Options fall back to environment variables. */
export function createPay(options: PayOptions = {}): Pay {
  // Plain JavaScript passes anything: null would otherwise fail as "Cannot convert undefined or null to object".
  checkOptionsObject(options);
  checkOptionKeys(options);
  checkOptionTypes(options);
  // Ignored there, the check it was meant for would be missing without a word: a resolveCheckout makes its own.
  if (options.resolveCheckout !== undefined && options.authorizeOrder !== undefined) {
    throw new PayError('CONFIG_INVALID', 'paywidget-server configuration: authorizeOrder applies to the default order resolver only (POST /widget-token with { order_id }, without resolveCheckout); with a resolveCheckout of your own, check there that the order is the caller\'s, and leave authorizeOrder out.', { details: { options: ['authorizeOrder', 'resolveCheckout'] } });
  }
  const config = resolveConfig(options);
  const maxBodyBytes = bodyLimit(options.maxBodyBytes);
  const logger = guardedLogger(options.logger ?? consoleLogger);
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
    options: { ...options.webhooks, maxBodyBytes: options.webhooks?.maxBodyBytes ?? maxBodyBytes },
    store: options.stores?.claims ?? new MemoryClaimStore({ now, logger }),
    logger,
    now,
    internalHandlers: [payments.recordWebhook],
  });
  const orders = config.commerce
    ? createOrders(config.commerce, { http: config.http, logger, now, stores: options.stores })
    : unconfiguredOrders(config.commerceMissing);
  // A platform named in part still resolves from orders: the order read then names what is missing.
  const commerceNamed = config.commerceMissing.length < COMMERCE_REQUIRED.length;
  // The mint guard reads the ledger, and asks the service again about a payment it holds as failed.
  const paymentsOfOrder = { byOrder: payments.ledger.byOrder, recheck: payments.recheck };
  const resolveCheckout = options.resolveCheckout ?? (commerceNamed ? orderCheckoutResolver(orders, paymentsOfOrder, options.authorizeOrder, logger) : undefined);
  const jsonRoutes = { authorize: options.authorize, maxBodyBytes };
  const router = createRouter([
    widgetTokenRoute({ ...jsonRoutes, resolveCheckout, merchantResolveCheckout: options.resolveCheckout !== undefined, mint }),
    webhooks.route,
    reconcileRoute({ ...jsonRoutes, reconcile: (paymentId, options) => payments.reconcile(paymentId, options, {}, { finishPollInFlight: true }) }),
    paymentRoute({ ...jsonRoutes, lookup: payments.get }),
  ], logger);

  // Last, once nothing else can throw: an instance that fails to build must not tie the stores to its merchant.
  claimStores(options.stores, { merchantId: config.payment?.merchantId, commerceUrl: config.commerce?.url });
  return {
    config,
    maxBodyBytes: Math.max(maxBodyBytes, webhooks.maxBodyBytes),
    mintWidgetToken: mint,
    webhooks,
    orders,
    payments: { status: payments.status, reconcile: payments.reconcile, reconcilePending: payments.reconcilePending, get: payments.get, byOrder: payments.byOrder, pruneLedger: payments.pruneLedger },
    reconcileOrders: (reconcileOptions) => reconcileOrders({ ledger: payments.ledger, iterate: (o) => orders.iterate(o), findOrder: (id, signal) => findOrderById(orders, id, signal), logger, now }, reconcileOptions),
    checkoutForOrder: (entityId) => checkoutForOrder(orders, paymentsOfOrder, entityId),
    routes: router.routes,
    matches: router.matches,
    hasRoute: router.hasRoute,
    bodyLimit: router.bodyLimit,
    allowedMethods: router.allowedMethods,
    handle: router.handle,
    drain: webhooks.drain,
  };
}

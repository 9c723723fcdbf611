import { resolveConfig, type ConfigOptions, type ResolvedConfig } from './config.js';
import { mintWidgetToken, type MintInput } from './payments/mint.js';
import type { WidgetToken } from './payments/widget-token.js';
import { createRouter, type Router } from './router.js';
import { widgetTokenRoute, type Authorize, type ResolveCheckout } from './routes/widget-token.js';
import type { Logger } from './types.js';
import { MemoryClaimStore, type StoreOptions } from './stores/index.js';
import { createWebhooks, type WebhookOptions, type Webhooks } from './webhooks/index.js';

export interface PayOptions extends ConfigOptions {
  /** Decides what the shopper owes for a `POST /widget-token` request, from the server's own records. */
  resolveCheckout?: ResolveCheckout;
  /** Runs before every route that acts for a shopper; return false to answer 401. */
  authorize?: Authorize;
  /** pino-compatible; silent by default. */
  logger?: Logger;
  /** Clock in milliseconds, for tests. */
  now?: () => number;
  /** Largest request body the routes read, in bytes (1 MiB by default); past it they answer 413. */
  maxBodyBytes?: number;
  /** Webhook verification and deduplication (tolerance, body limit, retention, lease, event type). */
  webhooks?: WebhookOptions;
  /** Shared state; in memory by default (one instance). */
  stores?: StoreOptions;
}

export interface Pay extends Router {
  readonly config: ResolvedConfig;
  readonly maxBodyBytes: number;
  mintWidgetToken(input: MintInput): Promise<WidgetToken>;
  readonly webhooks: Webhooks;
}

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** The object every part of the library hangs off. Options fall back to environment variables. */
export function createPay(options: PayOptions = {}): Pay {
  const config = resolveConfig(options);
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? Date.now;

  const mint = (input: MintInput) => mintWidgetToken({ payment: config.payment, http: config.http, logger, now }, input);
  const webhooks = createWebhooks({
    secrets: config.payment.webhookSecrets,
    options: { maxBodyBytes: options.maxBodyBytes, ...options.webhooks },
    store: options.stores?.claims ?? new MemoryClaimStore({ now }),
    logger,
    now,
  });
  const router = createRouter([
    widgetTokenRoute({ authorize: options.authorize, resolveCheckout: options.resolveCheckout, mint }),
    webhooks.route,
  ], logger);

  return {
    config,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    mintWidgetToken: mint,
    webhooks,
    routes: router.routes,
    matches: router.matches,
    handle: router.handle,
  };
}

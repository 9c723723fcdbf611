export { createPay, type Pay, type PayOptions } from './core/pay.js';
export { PayError, UpstreamError, ERROR_STATUS, type PayErrorCode } from './core/errors.js';
export { toMinorUnits, fromMinorUnits, isKnownCurrency, currencyExponent } from './core/money/index.js';
export { WidgetToken } from './core/payments/widget-token.js';
export type { MintInput } from './core/payments/mint.js';
export type { HookRequest, ResolveCheckout, Authorize } from './core/routes/widget-token.js';
export type { PayRequest, PayResponse, HeaderInput, Logger } from './core/types.js';
export type { PaymentOptions, CommerceOptions, HttpOptions } from './core/config.js';
export { WebhookVerificationError, WebhookHandlerError } from './core/webhooks/index.js';
export type {
  Webhooks, VerifySafeResult, VerifyInput, VerifiedWebhook, WebhookVerificationCode,
  WebhookEvent, WebhookHandler, WebhookErrorHandler, WebhookFailure, WebhookOptions,
} from './core/webhooks/index.js';
export { MemoryClaimStore, type MemoryClaimStoreOptions, type ClaimStore, type ClaimResult, type StoreOptions } from './core/stores/index.js';

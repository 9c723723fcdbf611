export { createPay, type Pay, type PayOptions } from './core/pay.js';
export { consoleLogger, silentLogger } from './core/logger.js';
export { PayError, UpstreamError, ERROR_STATUS, type PayErrorCode } from './core/errors.js';
export { toMinorUnits, fromMinorUnits, isKnownCurrency, currencyExponent } from './core/money/index.js';
export { WidgetToken } from './core/payments/widget-token.js';
export { widgetScriptTag, WIDGET_SCRIPT_PATH, type WidgetScriptTagOptions } from './core/widget-script-tag.js';
export type { MintInput } from './core/payments/mint.js';
export type { HookRequest, ResolveCheckout, Authorize, AuthorizeOrder } from './core/routes/hooks.js';
export type { Framework, PayRequest, PayResponse, HeaderInput, Logger } from './core/types.js';
export type { PaymentOptions, CommerceOptions, HttpOptions } from './core/config.js';
export { WebhookVerificationError, WebhookHandlerError } from './core/webhooks/index.js';
export type {
  Webhooks, VerifySafeResult, VerifyInput, VerifiedWebhook, WebhookVerificationCode,
  WebhookEvent, WebhookHandler, WebhookHandlerOf, WebhookErrorHandler, WebhookFailure, WebhookOptions, DrainOptions,
} from './core/webhooks/index.js';
export { MemoryClaimStore, type MemoryClaimStoreOptions, type ClaimStore, type ClaimResult, type StoreOptions } from './core/stores/index.js';
export type { Awaitable } from './core/awaitable.js';
export { CommerceError, checkoutFromOrder, type MagentoErrorBody } from './core/commerce/index.js';
export type {
  Orders, OrderFilter, OrderSearch, OrderIterateOptions, OrderSyncOptions, OrderSyncProgress, OrderSyncSummary,
  CommerceOrder, CommerceOrderItem, CommerceAddress, CommercePayment, CommerceStatusHistory, CommerceSearchCriteria, CommerceSearchResult,
} from './core/commerce/index.js';
export { MemoryCheckpointStore, MemoryAdminTokenStore, type CheckpointStore, type MemoryCheckpointStoreOptions, type AdminTokenStore, type MemoryAdminTokenStoreOptions } from './core/stores/index.js';
export { DEFAULT_TERMINAL_STATUSES, defaultExtractPayment } from './core/payments/index.js';
export type {
  Payments, PaymentsOptions, StatusAuth, PaymentOutcome, PaymentStatus, StatusOptions, ReconcileOptions, ReconcileOutcome, ReconcileResult,
  ReconcilePendingOptions, SweepChange, SweepReport, PruneLedgerOptions, PruneLedgerReport, OrderFinding, OrderFindingKind, OrderReconciliationReport, ReconcileOrdersOptions,
  ExtractPayment, PaymentObservation,
} from './core/payments/index.js';
export {
  MemoryLedgerStore, applyObservation, isForgettable, OUTCOME_RANK, type ForgetCondition, type MemoryLedgerStoreOptions, type LedgerStore, type LedgerEntry, type LedgerObservation,
  type LedgerOutcome, type LedgerQuery, type LedgerRecordResult, type LedgerSource,
} from './core/stores/index.js';

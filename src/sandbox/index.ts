/**
 * `paywidget-server/sandbox`: an embedded fake of the payment service (test cards, 3DS, pay by bank,
 * signed webhooks with retries and duplicates, fault injection) and of the commerce platform (Magento 2
 * REST: admin token, generated orders, search criteria, old-platform quirks) on 127.0.0.1, for demos and tests.
 * The endpoints and error codes are listed in src/sandbox/README.md.
 */
export { startSandbox } from './payment/sandbox.js';
export { TEST_CARDS, TEST_SHOPPER_EMAIL } from './payment/cards.js';
export type {
  ActiveFault,
  FaultInjector,
  FaultRule,
  Sandbox,
  SandboxOptions,
  SandboxPayment,
  SandboxPaymentMethod,
  SandboxPaymentStatus,
  NewSandboxPayment,
  SandboxPayments,
  SandboxWebhooks,
  WebhookDelivery,
  WebhookEvent,
  WebhookEventData,
} from './payment/types.js';
export type { CommerceSandboxOptions, SandboxCommerce, SandboxCommerceStats, SandboxOrder } from './commerce/types.js';

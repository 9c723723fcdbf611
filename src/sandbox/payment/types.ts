/** Public types of the payment-service sandbox. */
import type { CommerceSandboxOptions, SandboxCommerce } from '../commerce/types.js';

export type SandboxPaymentStatus = 'processing' | 'requires_action' | 'pending' | 'succeeded' | 'declined' | 'canceled';
/** How a sandbox payment was made. */
export type SandboxPaymentMethod = 'card' | 'saved_card' | 'pay_by_bank';

/** Options of `startSandbox()`; every one has a default. */
export interface SandboxOptions {
  /** Default 0 (an ephemeral port). The sandbox always binds 127.0.0.1. */
  port?: number | undefined;
  /** Port of the widget host (`widgetUrl`), another origin than the API. Default 0 (ephemeral). */
  widgetPort?: number | undefined;
  /** Default `merchant_sandbox`. */
  merchantId?: string | undefined;
  /** Default a random `sk_test_…`. */
  apiKey?: string | undefined;
  /** Default a random `whsec_…`. */
  webhookSecret?: string | undefined;
  /** Where signed webhooks are POSTed (http: only); can be set later with `setWebhookUrl`. */
  webhookUrl?: string | undefined;
  /**
   * Clock in ms, used for token expiry, `created` fields and webhook timestamps (default `Date.now()` at each reading).
   * Timers still run in real time. A test that moves it gives `createPay({ now })` the same clock: else the webhooks,
   * signed by this clock, are refused as signed in the future.
   */
  now?: (() => number) | undefined;
  /** Retries on non-2xx or network error, with delay `baseDelayMs * 2^(attempt-1)`. Defaults 5 attempts, 100 ms, 5000 ms per attempt. */
  webhookRetry?: { attempts?: number | undefined; baseDelayMs?: number | undefined; timeoutMs?: number | undefined } | undefined;
  /** Send each webhook this many extra times, concurrently, with the same event id and body. Default 0. */
  duplicateWebhooks?: number | undefined;
  /**
   * A card payment that will succeed stays `processing` for this long before it becomes `succeeded`
   * (new card, saved card, 3DS pass). 0 (default) confirms at once; `Infinity` never confirms on its own.
   */
  confirmDelayMs?: number | undefined;
  /**
   * Whether the status endpoint also accepts the merchant credentials (true, the default, as the library's
   * `payments.statusAuth` default uses them when it has no client token), or only the payment's
   * `payment_client_token`, as the Payment API document reads (false). Test a server-side sweep with false
   * too if your payment service follows the document to the letter.
   */
  statusAcceptsMerchantCredentials?: boolean | undefined;
  /**
   * How long the widget polls a card payment's status before it reports `needsReconciliation` (default 30 s, as a
   * widget would): shorter, a browser test of that path does not wait half a minute. Each poll is cut off at what
   * is left of it, so a status call that hangs ends in `needsReconciliation` too.
   */
  widgetPollBudgetMs?: number | undefined;
  /** Whether lookup offers pay by bank and `/api/v1/checkout` accepts it. Default true. */
  payByBankEligible?: boolean | undefined;
  /** The commerce platform started beside the payment service (generated orders, admin login, quirks). */
  commerce?: CommerceSandboxOptions | undefined;
}

/** A payment the sandbox holds, as its status endpoint and webhooks report it. */
export interface SandboxPayment {
  /** `pay_…`. */
  readonly id: string;
  readonly status: SandboxPaymentStatus;
  readonly method: SandboxPaymentMethod;
  /** Minor units. */
  readonly amount: number;
  /** ISO 4217 code. */
  readonly currency: string;
  /** The order id the widget token was minted for. */
  readonly orderId: string;
  /** The bearer credential of the status endpoint for this payment. */
  readonly paymentClientToken: string;
  /** Card payments: the card number's last four digits. */
  readonly cardLast4?: string;
  /** Saved-card payments: the saved card used. */
  readonly savedPaymentMethodId?: string;
  /** Set when declined: `generic_decline`, `authentication_failed`, `bank_declined`, `unknown_test_card`. */
  readonly declineCode?: string;
  /** Pay by bank: where the bank page sends the shopper back. */
  readonly returnUrl?: string;
  /** now() in ms. */
  readonly createdAt: number;
  /** now() in ms, at the last status change. */
  readonly updatedAt: number;
}

/** The `data` of a sandbox webhook: the payment it is about. */
export interface WebhookEventData {
  payment_id: string;
  status: SandboxPaymentStatus;
  order_id: string;
  amount: number;
  currency: string;
}

/** A webhook body as the sandbox sends it (the wire format; your handlers get the core's `WebhookEvent`, with this as `payload`). */
export interface WebhookEvent {
  /** Also sent as `X-Pay-Event-Id`. */
  id: string;
  type: 'payment.succeeded' | 'payment.failed' | 'payment.canceled';
  /** Unix seconds. */
  created: number;
  data: WebhookEventData;
}

/** One delivery attempt of one copy of an event. */
export interface WebhookDelivery {
  eventId: string;
  type: WebhookEvent['type'];
  paymentId: string;
  /** 0 for the original, 1…n for the copies `duplicateWebhooks` adds. */
  copy: number;
  /** 1-based attempt number of this copy. */
  attempt: number;
  /** Where it was POSTed. */
  url: string;
  /** The receiver's HTTP status; null when there was no answer (network error, time-out). */
  status: number | null;
  /** Whether the receiver answered 2xx. */
  ok: boolean;
  /** The network error or time-out, when there was no answer. */
  error?: string;
  /** What the receiver answered (its first 2 KiB, as UTF-8), e.g. why it refused the delivery. */
  answer?: string;
  /** The `X-Pay-Timestamp` sent (unix seconds as a string) and the `X-Pay-Signature`. */
  timestamp: string;
  signature: string;
  /** The body sent, byte for byte. */
  body: string;
}

/** One injected fault: which requests it affects, and what happens to them. */
export interface FaultRule {
  /**
   * `'METHOD /path'`, `'/path'` (any method) or `'* /path'`; `:id`, `{id}` and `*` match one segment.
   * Default: every `/api/…` route (`/rest/…` on the commerce platform). Faults never apply to the `/sandbox/…`
   * control routes. A route that could never match (an unknown method, a path outside the service's) is refused.
   */
  route?: string;
  /** How many matching requests the rule affects. Default 1; `Infinity` for always. */
  times?: number;
  /** Probability (0…1) that a matching request is affected. Default 1. */
  rate?: number;
  /** Answer with this status (default 500 when `body` is given). */
  status?: number;
  /** Raw response body; default a JSON error with code `injected_fault`. */
  body?: string;
  /** Headers of the injected answer (e.g. `Retry-After`). */
  headers?: Record<string, string>;
  /** Delay before answering. Alone, the request is then served normally. */
  latencyMs?: number;
  /** Never answer; the connection is dropped on close(). */
  hang?: boolean;
  /** Answer 200 with a body that is not JSON (under `Content-Type: application/json`). */
  malformed?: boolean;
}

/** A fault rule in force, with its counters. */
export interface ActiveFault {
  /** What `inject` returned; `remove(id)` takes it out. */
  id: string;
  /** The rule as injected. */
  rule: FaultRule;
  /** Matching requests it will still affect (Infinity for always). */
  remaining: number;
  /** Requests it has affected so far. */
  hits: number;
}

/** Fault injection of one sandbox service: `sb.faults` (payment) and `sb.commerce.faults`. */
export interface FaultInjector {
  /** Adds a rule (checked in order, first match wins) and returns its id. Throws TypeError on an invalid rule. */
  inject(rule: FaultRule): string;
  /** Takes a rule out; false when it was not there. */
  remove(id: string): boolean;
  /** Takes every rule out. */
  clear(): void;
  /** The rules in force, with how often each has struck. */
  list(): ActiveFault[];
}

/** `sb.payments`: the payments the sandbox holds, and ways to move them along. */
export interface SandboxPayments {
  /** One payment by id, or undefined. */
  get(id: string): SandboxPayment | undefined;
  /** Every payment, oldest first. */
  list(): SandboxPayment[];
  /** Forces a status; for succeeded, declined and canceled it also sends the webhook (every time). Throws on an unknown id. */
  setStatus(id: string, status: SandboxPaymentStatus): void;
  /** Changes `confirmDelayMs` for payments created from now on. */
  setConfirmDelay(ms: number): void;
  /**
   * Creates a payment directly, without a widget token or checkout (tests that need a payment the
   * merchant's records disagree with). A terminal status sends its webhook. Throws TypeError on bad input.
   */
  create(input: NewSandboxPayment): SandboxPayment;
}

/** `sb.payments.create()` and `POST /sandbox/payments`. */
export interface NewSandboxPayment {
  /** Positive integer, minor units. */
  amount: number;
  /** 3-letter upper-case code. */
  currency: string;
  /** The merchant's order id. */
  orderId: string;
  /** Default `processing` (`pending` for pay by bank, which `/sandbox/bank/{id}/approve` can then decide). */
  status?: SandboxPaymentStatus;
  /** Default `card`. */
  method?: SandboxPaymentMethod;
}

/** `sb.webhooks`: what the sandbox sent, for assertions. */
export interface SandboxWebhooks {
  /** Every attempt, in the order they finished. */
  readonly delivered: WebhookDelivery[];
  /** Every event generated, whether or not a webhook URL was set. */
  readonly events: WebhookEvent[];
  /** Resolves when no delivery or retry is pending (does not wait for delayed confirmations). */
  idle(): Promise<void>;
}

/** A running sandbox: both fake services over real HTTP on 127.0.0.1, and handles to steer them. */
export interface Sandbox {
  /** `http://127.0.0.1:<port>`: `PAY_API_URL`. */
  readonly paymentUrl: string;
  /** `PAY_MERCHANT_ID`. */
  readonly merchantId: string;
  /** `PAY_MERCHANT_API_KEY` (hidden from `JSON.stringify` and `util.inspect` of the sandbox). */
  readonly apiKey: string;
  /** `PAY_WEBHOOK_SECRET`: the sandbox signs its webhooks with it. */
  readonly webhookSecret: string;
  /** Card numbers that succeed, ask for 3DS, or are declined. */
  readonly testCards: { readonly succeeds: string; readonly requires3ds: string; readonly declines: string };
  /** The seeded shopper with two saved cards. */
  readonly testShopper: { readonly email: string; readonly savedPaymentMethodIds: readonly string[] };
  /** Where webhooks go from now on (http: only); undefined stops sending them. */
  setWebhookUrl(url: string | undefined): void;
  /** Fault injection on the payment service's routes. */
  readonly faults: FaultInjector;
  /** The payments, and ways to move them along. */
  readonly payments: SandboxPayments;
  /** The events and delivery attempts so far. */
  readonly webhooks: SandboxWebhooks;
  /** The commerce platform (Magento 2 REST), `http://127.0.0.1:<port>`, on its own port. */
  readonly commerceUrl: string;
  /** Its admin login (for COMMERCE_USERNAME / COMMERCE_PASSWORD). */
  readonly commerceUsername: string;
  /** Hidden from `JSON.stringify` and `util.inspect` of the sandbox. */
  readonly commercePassword: string;
  /** Orders, tokens, quirks and faults of the commerce platform. */
  readonly commerce: SandboxCommerce;
  /**
   * The widget host, `http://127.0.0.1:<port>` (not the API's port): serves `/widget/v1/paywidget.js`
   * (`PayWidget.mount`), the frame it mounts, and `/widget/v1/integrity.json`.
   */
  readonly widgetUrl: string;
  /** The published integrity of `/widget/v1/paywidget.js`: `sha384-<base64>` of the bytes served. */
  readonly widgetIntegrity: string;
  /** Closes the server and every connection (hanging ones too) and cancels pending timers and webhook retries. */
  close(): Promise<void>;
}

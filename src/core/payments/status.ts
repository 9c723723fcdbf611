import type { HttpPolicy, PaymentConfig } from '../config.js';
import { invalidInput, PayError } from '../errors.js';
import { assertOk, callUpstream, MERCHANT_CREDENTIALS_HINT, parseJsonBody, refusedCredentials } from '../http.js';
import type { UpstreamResponse } from '../transport/index.js';
import { Secret } from '../secret.js';
import type { Logger } from '../types.js';
import type { PaymentOutcome, StatusAuth } from './options.js';
import { isWellFormedText } from '../well-formed.js';

/** Options of `pay.payments.status()`. */
export interface StatusOptions {
  /** The payment's `payment_client_token` (from `mobile/checkout` or `checkout`), when the caller has it. */
  clientToken?: string | Secret | undefined;
  /** Stops the call, and its retries, at once. */
  signal?: AbortSignal | undefined;
}

/** What the status endpoint said, with the library's reading of it. Holds no credential. */
export interface PaymentStatus {
  /** The service's payment id. */
  paymentId: string;
  /** The service's status value, as sent. */
  status: string;
  /** What the status means, by `payments.terminalStatuses`: confirmed, failed, or unresolved (not terminal yet). */
  outcome: PaymentOutcome;
  /** The merchant's order id the payment was minted for, when the service sends it. */
  orderId?: string;
  /** Integer minor units, when the service sends them. */
  amount?: number;
  /** ISO 4217 code, upper case, when the service sends it. */
  currency?: string;
  /** Why the payment was declined, when the service sends a `decline_code`. */
  declineCode?: string;
}

export interface StatusContext {
  /** Called only when the merchant credentials are needed, so CONFIG_MISSING names what is missing. */
  payment: () => PaymentConfig;
  http: HttpPolicy;
  logger: Logger;
  statusAuth: StatusAuth;
  classify: (status: string) => PaymentOutcome;
}

/** `.` and `..` are refused: encodeURIComponent keeps them, and the URL would resolve them to another path. */
const PAYMENT_ID = /^(?!\.{1,2}$)[^\s/?#\\]{1,200}$/;

/** Whether a value is a payment id as it may go into a path (see checkPaymentId), without building an error. */
export function isPaymentId(value: unknown): value is string {
  return typeof value === 'string' && PAYMENT_ID.test(value) && isWellFormedText(value);
}

/** A payment id as it may go into a path: 1 to 200 characters, no whitespace, slash, `?`, `#` or backslash, not `.` or `..`. */
export function checkPaymentId(paymentId: unknown): string {
  if (!isPaymentId(paymentId)) {
    const got = typeof paymentId === 'string' ? `'${paymentId.slice(0, 40)}'` : typeof paymentId;
    throw invalidInput('paymentId', `paymentId must be the payment_id the payment service returned: 1 to 200 characters without spaces or slashes (got ${got}).`);
  }
  return paymentId;
}

/**
 * What a Bearer credential can carry: printable ASCII without spaces, bounded. Anything else would make
 * node:http refuse the header before sending, which reads as an unreachable service and is polled for the
 * whole budget instead of being refused as bad input.
 */
const CLIENT_TOKEN = /^[\x21-\x7e]{1,4096}$/;

/** A client token as it may go into `Authorization: Bearer`; INVALID_INPUT (400) naming `field` otherwise. Never echoes it. */
export function checkClientToken(token: string, field: string): string {
  if (!CLIENT_TOKEN.test(token)) {
    throw invalidInput(field, `${field} must be the payment_client_token as the payment service issued it: 1 to 4,096 printable ASCII characters without spaces (it is sent as a Bearer credential).`);
  }
  return token;
}

/** The token as a Secret, or undefined when absent or empty. */
export function toClientToken(value: unknown): Secret | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (value instanceof Secret) {
    checkClientToken(value.reveal().trim(), 'clientToken');
    return value;
  }
  if (typeof value !== 'string') throw invalidInput('clientToken', 'clientToken must be the payment_client_token string.');
  return new Secret(checkClientToken(value.trim(), 'clientToken'));
}

/**
 * The Payment API document names only the payment_client_token for this call; the merchant credentials are
 * the fallback for callers without it (a sweep). A service that follows the document refuses them, with credentials that mint fine.
 */
/** The advice for a service that takes only the client token on the status call, in createPay's terms (the CLI words it for a shell). */
export const CLIENT_TOKEN_ONLY = "If they mint tokens, this payment service accepts only the payment's payment_client_token on the status endpoint: pass { clientToken } where your code has it (the checkout call that pays answers it, to the widget or the mobile SDK; the web widget's events do not pass it to the page), or set payments.statusAuth to 'client-token' and let webhooks settle the payments whose token the server never saw: a page's reconcile call cannot then learn an outcome.";
const MERCHANT_STATUS_HINT = `The status call went with the merchant credentials, as no payment_client_token was given. ${MERCHANT_CREDENTIALS_HINT} ${CLIENT_TOKEN_ONLY}`;

/** The headers that authenticate the status call, by `payments.statusAuth`. */
function credentials(ctx: StatusContext, token: Secret | undefined): { url: string; headers: Record<string, string>; by: 'client-token' | 'merchant'; secret: string } {
  if (token && ctx.statusAuth !== 'merchant') {
    return { url: ctx.payment().apiUrl, headers: { authorization: `Bearer ${token.reveal()}` }, by: 'client-token', secret: token.reveal() };
  }
  if (ctx.statusAuth === 'client-token') {
    throw invalidInput('clientToken', "payments.statusAuth is 'client-token', so the status of a payment can only be read with its payment_client_token: pass { clientToken }. Set statusAuth to 'client-token-or-merchant' to use the merchant credentials otherwise.");
  }
  const payment = ctx.payment();
  return { url: payment.apiUrl, headers: { 'x-merchant-id': payment.merchantId, 'x-merchant-api-key': payment.apiKey.reveal() }, by: 'merchant', secret: payment.apiKey.reveal() };
}

/**
 * `GET /api/v1/payments/{payment_id}/status`, once (the HTTP layer retries transport failures, 5xx and
 * 429). PAYMENT_NOT_FOUND (404) when the service does not know the id; any other refusal as an
 * UpstreamError with the service's status and body.
 */
export async function fetchPaymentStatus(ctx: StatusContext, paymentIdInput: string, options: StatusOptions = {}, policy?: Partial<HttpPolicy>): Promise<PaymentStatus> {
  const paymentId = checkPaymentId(paymentIdInput);
  const { url, headers, by, secret } = credentials(ctx, toClientToken(options.clientToken));
  const response = await callUpstream({
    service: 'payment',
    method: 'GET',
    url: `${url}/api/v1/payments/${encodeURIComponent(paymentId)}/status`,
    headers: { accept: 'application/json', ...headers },
    policy,
    secrets: [secret],
    signal: options.signal,
  }, ctx.http, ctx.logger);

  if (response.status === 404) throw notFound(response, paymentId);
  const hint = by === 'merchant' ? MERCHANT_STATUS_HINT : 'Check the payment_client_token: it must be the one the checkout answered for this payment.';
  if (!response.ok) {
    // The service's own failure, or its rate limit, ends in an error the caller reports (reconcile: once, after its
    // budget); a refusal of the request itself (credentials, the payment id) is what someone must fix.
    const transient = response.status >= 500 || response.status === 429;
    ctx.logger[transient ? 'debug' : 'warn']({ paymentId, status: response.status, credential: by }, statusRefusal(response.status, hint));
  }
  assertOk('payment', response, hint);
  const body = parseJsonBody('payment', response) as Record<string, unknown> | null;
  const status = typeof body === 'object' && body !== null ? body.status : undefined;
  if (typeof status !== 'string' || status.trim() === '') {
    throw new PayError('UPSTREAM_INVALID_RESPONSE', `The payment service answered the status call for ${paymentId} without a status.`, { details: { service: 'payment', paymentId } });
  }
  // A proxy or cache answering for another payment would have this one recorded with that one's status.
  // A service with numeric ids may send the id as a number: the same payment all the same.
  const answeredFor = typeof body?.payment_id === 'number' ? String(body.payment_id) : body?.payment_id;
  if (answeredFor != null && answeredFor !== paymentId) {
    throw new PayError('UPSTREAM_INVALID_RESPONSE', `The payment service answered the status call for ${paymentId} with the status of another payment (${String(answeredFor).slice(0, 60)}).`, { details: { service: 'payment', paymentId } });
  }
  const trimmed = status.trim(); // a stray space or newline around it does not make 'succeeded' another status
  const result: PaymentStatus = { paymentId, status: trimmed, outcome: ctx.classify(trimmed) };
  // A number too, as a webhook's is read (a service with numeric order ids): else the payment is filed under no order.
  const orderId = body?.order_id ?? body?.orderId;
  if (typeof orderId === 'string' && orderId !== '') result.orderId = orderId;
  else if (typeof orderId === 'number' && Number.isSafeInteger(orderId)) result.orderId = String(orderId);
  if (typeof body?.amount === 'number' && Number.isSafeInteger(body.amount)) result.amount = body.amount;
  if (typeof body?.currency === 'string' && /^[A-Za-z]{3}$/.test(body.currency)) result.currency = body.currency.toUpperCase();
  if (typeof body?.decline_code === 'string') result.declineCode = body.decline_code;
  ctx.logger.debug({ paymentId, status: trimmed, credential: by }, 'payment status read');
  return result;
}

/** The log line of a refused status call, as mint.ts has one for the mint: what to check, where the status says. */
function statusRefusal(status: number, hint: string): string {
  if (refusedCredentials(status)) return `payment service refused the credentials of a status call. ${hint}`;
  return status >= 500 ? 'payment service failed a status call (its own error, after the retries)' : 'payment service refused a status call';
}

/**
 * The service's own "no such payment" is a JSON error object (`{ "error": … }`). A page (HTML, text), or another
 * service's JSON (Magento's `{"message":"Request does not match any route."}`, a gateway's `{"message":"Not Found"}`),
 * comes from some other server: PAY_API_URL points elsewhere, and a sweep must not forget payments on its word.
 */
function notFound(response: UpstreamResponse, paymentId: string): PayError {
  let answer: unknown;
  try {
    answer = parseJsonBody('payment', response);
  } catch {
    // not JSON: answered below
  }
  if (typeof answer === 'object' && answer !== null && (answer as { error?: unknown }).error != null) {
    return new PayError('PAYMENT_NOT_FOUND', `The payment service does not know payment ${paymentId}. Check the id: it is the payment_id the checkout answered.`, { details: { paymentId, where: 'payment service' } });
  }
  return new PayError('UPSTREAM_INVALID_RESPONSE', `The status call for payment ${paymentId} was answered 404 with a body that is not the payment service's error (no "error" in it): check PAY_API_URL (payment.apiUrl), the service's base URL such as https://pay.example.com, without /api/v1.`, { details: { service: 'payment', paymentId, wrongAddress: true } });
}

import type { HttpPolicy, PaymentConfig } from '../config.js';
import { PayError, invalidInput, loggedWhereItArose } from '../errors.js';
import { answerExcerpt, callUpstream, MERCHANT_CREDENTIALS_HINT, parseJsonBody, refusedCredentials, upstreamRefusal } from '../http.js';
import { isKnownCurrency } from '../money/index.js';
import type { Logger } from '../types.js';
import { isWellFormedText } from '../well-formed.js';
import { WidgetToken } from './widget-token.js';

/** What a widget token is minted for: decided by the server (`resolveCheckout`, or the order), never by the browser. */
export interface MintInput {
  /** Integer minor units (cents), > 0. Use toMinorUnits() to convert a decimal total. */
  amount: number;
  /** ISO 4217 code, e.g. 'EUR'. */
  currency: string;
  /** The merchant's order reference. */
  orderId: string;
}

/** A widget token is valid 15 minutes after minting (payment document, section 2). */
export const WIDGET_TOKEN_LIFETIME_MS = 15 * 60_000;

export interface MintContext {
  payment: PaymentConfig;
  http: HttpPolicy;
  logger: Logger;
  now: () => number;
}

/** Checks the input, then mints a one-time widget token with the merchant credentials. */
export async function mintWidgetToken(ctx: MintContext, input: MintInput): Promise<WidgetToken> {
  const { amount, currency, orderId } = checkMintInput(input);
  const mintedAt = ctx.now();
  const response = await callUpstream({
    service: 'payment',
    method: 'POST',
    url: `${ctx.payment.apiUrl}/api/v1/checkout/init`,
    headers: {
      'content-type': 'application/json',
      'x-merchant-id': ctx.payment.merchantId,
      'x-merchant-api-key': ctx.payment.apiKey.reveal(),
    },
    body: JSON.stringify({ amount, currency, order_id: orderId }),
    secrets: [ctx.payment.apiKey.reveal()],
    // A retry after the service may have minted would mint a second token for one click.
    idempotent: false,
  }, ctx.http, ctx.logger);

  if (!response.ok) {
    const refusal = upstreamRefusal('payment', response, MERCHANT_CREDENTIALS_HINT);
    const answer = answerExcerpt(refusal);
    const fields = { orderId, status: response.status, answer: answer.cut ? `${answer.text}…` : answer.text, ...(refusal.retryAfter === undefined ? {} : { retryAfter: refusal.retryAfter }) };
    if (response.status < 500) {
      ctx.logger.warn(fields, mintRefusal(response.status));
      throw refusal;
    }
    // Once, here, with the order: the router logs a 5xx it finds logged no more.
    ctx.logger.error({ ...fields, err: refusal }, mintRefusal(response.status));
    throw loggedWhereItArose(refusal);
  }
  const body = parseJsonBody('payment', response) as { widget_token?: unknown; expires_at?: unknown } | null;
  if (typeof body?.widget_token !== 'string' || body.widget_token === '') {
    throw new PayError('UPSTREAM_INVALID_RESPONSE', 'The payment service answered the mint call without a widget_token.');
  }
  const expiresAt = new Date(upstreamExpiry(body.expires_at, mintedAt) ?? mintedAt + WIDGET_TOKEN_LIFETIME_MS);
  ctx.logger.info({ orderId, amount, currency, expiresAt: expiresAt.toISOString() }, 'widget token minted');
  return new WidgetToken(body.widget_token, expiresAt);
}

/** The log line of a refused mint: what to check, where the status says. */
function mintRefusal(status: number): string {
  if (refusedCredentials(status)) return `payment service refused the merchant credentials when minting a widget token. ${MERCHANT_CREDENTIALS_HINT}`;
  // The mint route always exists: a 404 is another server, or a base URL that has the path already.
  if (status === 404) return 'the mint call was answered 404: check PAY_API_URL (payment.apiUrl), the payment service\'s base URL such as https://pay.example.com, without /api/v1';
  // A mint is retried only on a 503 (and a 429, below 500), where the service surely minted nothing.
  return status >= 500 ? `payment service failed to mint a widget token (its own error${status === 503 ? ', after the retries' : ''})` : 'payment service refused to mint a widget token';
}

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;
/** How far the service's clock may run ahead of ours before its expiry is not believed. */
const CLOCK_SKEW_MS = 60_000;

/**
 * The service's `expires_at`, when it is an ISO 8601 time a token just minted can have: after now and
 * at most its 15 minutes away. Anything else (Date.parse reads "1" as 2001) falls back to those 15 minutes.
 */
function upstreamExpiry(value: unknown, mintedAt: number): number | undefined {
  if (typeof value !== 'string' || !ISO_TIMESTAMP.test(value)) return undefined;
  const at = Date.parse(value);
  return at > mintedAt && at <= mintedAt + WIDGET_TOKEN_LIFETIME_MS + CLOCK_SKEW_MS ? at : undefined;
}

export function checkMintInput(input: MintInput): MintInput {
  if (typeof input !== 'object' || input === null) throw invalidInput('input', 'mintWidgetToken expects { amount, currency, orderId }.');
  const { amount, currency, orderId } = input;
  if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount <= 0) {
    throw invalidInput('amount', `amount must be a whole number of minor units above 0 (got ${describe(amount)}); convert a decimal total with toMinorUnits(total, currency).`);
  }
  if (typeof currency !== 'string' || !isKnownCurrency(currency)) {
    throw invalidInput('currency', `currency must be an ISO 4217 code in upper case such as 'EUR' (got ${describe(currency)}).`);
  }
  if (typeof orderId !== 'string' || orderId.trim() === '') {
    throw invalidInput('orderId', `orderId must be a non-empty string, the merchant's order reference (got ${describe(orderId)}).`);
  }
  // The payment ledger files payments under their order id, which must survive UTF-8 (in Redis, say) unchanged.
  if (!isWellFormedText(orderId)) throw invalidInput('orderId', 'orderId must be well-formed text: it holds half of a UTF-16 surrogate pair, which has no UTF-8 encoding.');
  return { amount, currency, orderId };
}

function describe(value: unknown): string {
  return typeof value === 'string' ? `'${value.slice(0, 40)}'` : typeof value === 'number' ? String(value) : typeof value;
}

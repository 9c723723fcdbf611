import { ApiError, bearerToken, header, invalid, jsonBody, safeEqual, type Reply, type RequestContext } from '../shared/http.js';
import type { Router } from '../shared/router.js';
import { CARD_FIELDS, cardOutcome, parseCard, ShopperStore } from './cards.js';
import type { SandboxContext } from './context.js';
import type { PaymentRecord } from './payments.js';
import type { WidgetTokenRecord } from './tokens.js';

function merchantAuthorized(sb: SandboxContext, ctx: RequestContext): boolean {
  const id = header(ctx, 'x-merchant-id');
  const key = header(ctx, 'x-merchant-api-key');
  return id !== undefined && key !== undefined && safeEqual(id, sb.merchantId) && safeEqual(key, sb.apiKey);
}

/** The widget token from the body (`widget_token`) or else `Authorization: Bearer`. */
function widgetToken(sb: SandboxContext, ctx: RequestContext, body: Record<string, unknown>): WidgetTokenRecord {
  const fromBody = body.widget_token;
  if (fromBody !== undefined && typeof fromBody !== 'string') throw invalid('widget_token', 'must be a string');
  return sb.tokens.require(fromBody ?? bearerToken(ctx));
}

function mint(sb: SandboxContext, ctx: RequestContext): Reply {
  if (!merchantAuthorized(sb, ctx)) throw new ApiError(401, 'invalid_credentials', 'X-Merchant-Id and X-Merchant-Api-Key are missing or wrong.');
  const body = jsonBody(ctx);
  const { amount, currency, order_id: orderId } = body;
  if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount <= 0) throw invalid('amount', 'must be a positive integer in minor currency units');
  if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency)) throw invalid('currency', 'must be a 3-letter upper-case currency code');
  if (typeof orderId !== 'string' || orderId.trim() === '') throw invalid('order_id', 'must be a non-empty string');
  const token = sb.tokens.mint({ amount, currency, orderId });
  return { status: 201, json: { widget_token: token.token, expires_at: new Date(token.expiresAt).toISOString() } };
}

function lookup(sb: SandboxContext, ctx: RequestContext): Reply {
  const body = jsonBody(ctx);
  const token = widgetToken(sb, ctx, body);
  if (body.customer_email !== undefined && typeof body.customer_email !== 'string') throw invalid('customer_email', 'must be a string');
  token.shopperEmail = sb.shoppers.known(ShopperStore.normalize(body.customer_email));
  return {
    status: 200,
    json: {
      order: { order_id: token.orderId, amount: token.amount, currency: token.currency },
      card_fields: CARD_FIELDS,
      saved_cards: sb.shoppers.cards(token.shopperEmail),
      pay_by_bank: { eligible: sb.payByBankEligible },
    },
  };
}

function orderOf(token: WidgetTokenRecord) {
  return { amount: token.amount, currency: token.currency, orderId: token.orderId };
}

function mobileCheckout(sb: SandboxContext, ctx: RequestContext): Reply {
  const body = jsonBody(ctx);
  const token = widgetToken(sb, ctx, body);
  const card = parseCard(body.card, sb.now());
  sb.tokens.spend(token);
  const outcome = cardOutcome(card.number);
  const base = { method: 'card' as const, ...orderOf(token), cardLast4: card.number.slice(-4) };
  let payment: PaymentRecord;
  if (outcome === 'succeeds') {
    payment = sb.payments.create({ ...base, status: 'processing' });
    sb.payments.confirm(payment);
  } else if (outcome === 'requires_3ds') {
    payment = sb.payments.create({ ...base, status: 'requires_action' });
  } else {
    payment = sb.payments.create({ ...base, status: 'declined', declineCode: outcome === 'declines' ? 'generic_decline' : 'unknown_test_card' });
  }
  const nextAction = outcome === 'requires_3ds' ? { type: 'three_d_secure', url: `${sb.baseUrl()}/sandbox/payments/${payment.id}/3ds` } : null;
  return {
    status: 201,
    json: {
      payment_id: payment.id,
      provider_params: { client_secret: payment.clientSecret, next_action: nextAction },
      payment_client_token: payment.paymentClientToken,
    },
  };
}

function checkout(sb: SandboxContext, ctx: RequestContext): Reply {
  const body = jsonBody(ctx);
  const token = widgetToken(sb, ctx, body);
  const savedId = body.saved_payment_method_id;
  const { method } = body;
  if (savedId !== undefined && method !== undefined) throw invalid('saved_payment_method_id', 'and method cannot both be given');
  if (savedId !== undefined) {
    if (typeof savedId !== 'string' || savedId === '') throw invalid('saved_payment_method_id', 'must be a non-empty string');
    const card = sb.shoppers.find(token.shopperEmail, savedId);
    sb.tokens.spend(token);
    const payment = sb.payments.create({ method: 'saved_card', ...orderOf(token), status: 'processing', cardLast4: card.last4, savedPaymentMethodId: card.id });
    sb.payments.confirm(payment);
    return { status: 201, json: { payment_id: payment.id, status: payment.status, payment_client_token: payment.paymentClientToken } };
  }
  if (method !== 'pay_by_bank') throw invalid('saved_payment_method_id', "or method: 'pay_by_bank' is required");
  if (!sb.payByBankEligible) throw new ApiError(403, 'pay_by_bank_unavailable', 'This merchant is not eligible for pay by bank.');
  const returnUrl = body.return_url;
  if (typeof returnUrl !== 'string' || !/^https?:$/.test(URL.canParse(returnUrl) ? new URL(returnUrl).protocol : '')) {
    throw invalid('return_url', 'must be an absolute http(s) URL');
  }
  sb.tokens.spend(token);
  const payment = sb.payments.create({ method: 'pay_by_bank', ...orderOf(token), status: 'pending', returnUrl });
  return {
    status: 201,
    json: { payment_id: payment.id, redirect_url: `${sb.baseUrl()}/sandbox/bank/${payment.id}`, payment_client_token: payment.paymentClientToken },
  };
}

function status(sb: SandboxContext, ctx: RequestContext): Reply {
  const payment = sb.payments.require(ctx.params.payment_id!);
  const bearer = bearerToken(ctx);
  const byClientToken = bearer !== undefined && safeEqual(bearer, payment.paymentClientToken);
  if (!byClientToken && !(sb.statusAcceptsMerchantCredentials && merchantAuthorized(sb, ctx))) {
    if (bearer !== undefined) throw new ApiError(401, 'invalid_token', 'The payment client token does not belong to this payment.');
    throw sb.statusAcceptsMerchantCredentials
      ? new ApiError(401, 'invalid_credentials', 'Send Authorization: Bearer <payment_client_token> or the merchant credentials.')
      : new ApiError(401, 'invalid_credentials', 'Send Authorization: Bearer <payment_client_token>.');
  }
  return {
    status: 200,
    json: {
      payment_id: payment.id,
      status: payment.status,
      amount: payment.amount,
      currency: payment.currency,
      order_id: payment.orderId,
      ...(payment.status === 'declined' && payment.declineCode ? { decline_code: payment.declineCode } : {}),
    },
  };
}

function deleteSaved(sb: SandboxContext, ctx: RequestContext): Reply {
  const token = widgetToken(sb, ctx, jsonBody(ctx));
  return { status: 200, json: { saved_cards: sb.shoppers.remove(token.shopperEmail, ctx.params.id!) } };
}

function setDefault(sb: SandboxContext, ctx: RequestContext): Reply {
  const token = widgetToken(sb, ctx, jsonBody(ctx));
  return { status: 200, json: { saved_cards: sb.shoppers.setDefault(token.shopperEmail, ctx.params.id!) } };
}

/** The six endpoints the SDK calls, plus the mint call. */
export function addApiRoutes(router: Router, sb: SandboxContext): void {
  router
    .add('POST', '/api/v1/checkout/init', (ctx) => mint(sb, ctx))
    .add('POST', '/api/v1/checkout/lookup', (ctx) => lookup(sb, ctx))
    .add('POST', '/api/v1/mobile/checkout', (ctx) => mobileCheckout(sb, ctx))
    .add('POST', '/api/v1/checkout', (ctx) => checkout(sb, ctx))
    .add('GET', '/api/v1/payments/:payment_id/status', (ctx) => status(sb, ctx))
    .add('DELETE', '/api/v1/saved-payment-methods/:id', (ctx) => deleteSaved(sb, ctx))
    .add('POST', '/api/v1/payment-methods/:id/set-default', (ctx) => setDefault(sb, ctx));
}

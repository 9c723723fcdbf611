import { ApiError, escapeHtml, header, invalid, jsonBody, type Reply, type RequestContext } from '../shared/http.js';
import type { Router } from '../shared/router.js';
import type { SandboxContext } from './context.js';
import { PAYMENT_STATUSES, type PaymentRecord, type PaymentStore } from './payments.js';
import type { NewSandboxPayment, SandboxPaymentStatus } from './types.js';
import type { FaultRule } from './types.js';

function isForm(ctx: RequestContext): boolean {
  return (header(ctx, 'content-type') ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded');
}

function page(title: string, content: string): Reply {
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1>${content}</body></html>`;
  return { status: 200, html };
}

function button(action: string, label: string, fields: Record<string, string> = {}): string {
  const inputs = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
  return `<form method="post" action="${escapeHtml(action)}">${inputs}<button type="submit">${escapeHtml(label)}</button></form>`;
}

function paymentReply(ctx: RequestContext, payment: PaymentRecord, extra = ''): Reply {
  if (isForm(ctx)) return page(`Payment ${payment.status}`, `<p>Payment ${escapeHtml(payment.id)}: ${escapeHtml(payment.status)}</p>${extra}`);
  return { status: 200, json: { payment_id: payment.id, status: payment.status } };
}

function challengePage(sb: SandboxContext, ctx: RequestContext): Reply {
  const payment = sb.payments.require(ctx.params.id!);
  const action = `/sandbox/payments/${encodeURIComponent(payment.id)}/3ds`;
  return page('Sandbox 3-D Secure challenge', button(action, 'Pass', { result: 'pass' }) + button(action, 'Fail', { result: 'fail' }));
}

function challenge(sb: SandboxContext, ctx: RequestContext): Reply {
  const { result } = jsonBody(ctx, { allowForm: true });
  if (result !== 'pass' && result !== 'fail') throw invalid('result', "must be 'pass' or 'fail'");
  return paymentReply(ctx, sb.payments.completeChallenge(ctx.params.id!, result === 'pass'));
}

function bankPage(sb: SandboxContext, ctx: RequestContext): Reply {
  const payment = sb.payments.require(ctx.params.id!);
  const base = `/sandbox/bank/${encodeURIComponent(payment.id)}`;
  const summary = `<p>Pay ${payment.amount} (minor units) ${escapeHtml(payment.currency)} for order ${escapeHtml(payment.orderId)}.</p>`;
  return page('Sandbox bank', summary + button(`${base}/approve`, 'Approve') + button(`${base}/decline`, 'Decline'));
}

function bankDecision(sb: SandboxContext, ctx: RequestContext, approve: boolean): Reply {
  const payment = sb.payments.decideBank(ctx.params.id!, approve);
  const back = payment.returnUrl ? `<p><a href="${escapeHtml(payment.returnUrl)}">Return to the shop</a></p>` : '';
  return paymentReply(ctx, payment, back);
}

function forceStatus(sb: SandboxContext, ctx: RequestContext): Reply {
  const { status } = jsonBody(ctx);
  if (!PAYMENT_STATUSES.includes(status as SandboxPaymentStatus)) throw invalid('status', `must be one of ${PAYMENT_STATUSES.join(', ')}`);
  const payment = sb.payments.require(ctx.params.id!);
  sb.payments.setStatus(payment.id, status as SandboxPaymentStatus);
  return paymentReply(ctx, payment);
}

/** Checks a `NewSandboxPayment` and creates it; TypeError naming the field otherwise. */
export function createTestPayment(payments: PaymentStore, input: NewSandboxPayment): PaymentRecord {
  const { amount, currency, orderId } = input ?? ({} as NewSandboxPayment);
  const method = input?.method ?? 'card';
  if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount <= 0) throw new TypeError('amount must be a positive integer in minor currency units');
  if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency)) throw new TypeError('currency must be a 3-letter upper-case currency code');
  if (typeof orderId !== 'string' || orderId.trim() === '') throw new TypeError('orderId must be a non-empty string');
  if (!['card', 'saved_card', 'pay_by_bank'].includes(method)) throw new TypeError("method must be 'card', 'saved_card' or 'pay_by_bank'");
  const status = input.status ?? (method === 'pay_by_bank' ? 'pending' : 'processing');
  if (!PAYMENT_STATUSES.includes(status)) throw new TypeError(`status must be one of ${PAYMENT_STATUSES.join(', ')}`);
  return payments.create({ method, amount, currency, orderId, status, ...(status === 'declined' ? { declineCode: 'generic_decline' } : {}) });
}

function createPayment(sb: SandboxContext, ctx: RequestContext): Reply {
  const body = jsonBody(ctx);
  let payment: PaymentRecord;
  try {
    payment = createTestPayment(sb.payments, { amount: body.amount, currency: body.currency, orderId: body.order_id, status: body.status, method: body.method } as NewSandboxPayment);
  } catch (err) {
    if (err instanceof TypeError) throw new ApiError(422, 'invalid_request', `${err.message}.`);
    throw err;
  }
  return { status: 201, json: { payment_id: payment.id, status: payment.status, payment_client_token: payment.paymentClientToken } };
}

function addFault(sb: SandboxContext, ctx: RequestContext): Reply {
  const body = jsonBody(ctx);
  // JSON has no Infinity: `times: null` or `"Infinity"` mean always.
  if (body.times === null || body.times === 'Infinity') body.times = Infinity;
  try {
    return { status: 201, json: { id: sb.faults.inject(body as FaultRule) } };
  } catch (err) {
    if (err instanceof TypeError) throw new ApiError(422, 'invalid_request', err.message);
    throw err;
  }
}

function listFaults(sb: SandboxContext): Reply {
  const faults = sb.faults.list().map((f) => ({ ...f, remaining: Number.isFinite(f.remaining) ? f.remaining : null }));
  return { status: 200, json: { faults } };
}

function removeFault(sb: SandboxContext, ctx: RequestContext): Reply {
  if (!sb.faults.remove(ctx.params.id!)) throw new ApiError(404, 'fault_not_found', 'No active fault rule with this id.');
  return { status: 204 };
}

/** Test controls under `/sandbox/…`: never subject to fault injection, no authentication. */
export function addControlRoutes(router: Router, sb: SandboxContext): void {
  router
    .add('GET', '/sandbox/payments/:id/3ds', (ctx) => challengePage(sb, ctx))
    .add('POST', '/sandbox/payments/:id/3ds', (ctx) => challenge(sb, ctx))
    .add('POST', '/sandbox/payments', (ctx) => createPayment(sb, ctx))
    .add('POST', '/sandbox/payments/:id/status', (ctx) => forceStatus(sb, ctx))
    .add('GET', '/sandbox/bank/:id', (ctx) => bankPage(sb, ctx))
    .add('POST', '/sandbox/bank/:id/approve', (ctx) => bankDecision(sb, ctx, true))
    .add('POST', '/sandbox/bank/:id/decline', (ctx) => bankDecision(sb, ctx, false))
    .add('GET', '/sandbox/faults', () => listFaults(sb))
    .add('POST', '/sandbox/faults', (ctx) => addFault(sb, ctx))
    .add('DELETE', '/sandbox/faults', () => {
      sb.faults.clear();
      return { status: 204 };
    })
    .add('DELETE', '/sandbox/faults/:id', (ctx) => removeFault(sb, ctx));
}

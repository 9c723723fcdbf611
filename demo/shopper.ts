/**
 * What the checkout page and the shopper's device do, over HTTP: call the merchant backend's routes and
 * the payment service's widget endpoints (lookup, mobile checkout, status poll), as the widget would.
 */
import type { CommerceOrder } from 'paywidget-server';
import { check } from './run.js';
import type { DemoContext } from './steps.js';

export interface Answer {
  status: number;
  body: Record<string, unknown>;
}

export async function call(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(url, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? null : typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? {} : JSON.parse(text);
  } catch {
    parsed = { text };
  }
  return { status: response.status, body: (typeof parsed === 'object' && parsed !== null ? parsed : { value: parsed }) as Record<string, unknown> };
}

export const errorCode = (answer: Answer) => (answer.body.error as { code?: string } | undefined)?.code;
export const describe = (answer: Answer) => `HTTP ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`;

export async function until<T>(ms: number, probe: () => T | undefined | Promise<T | undefined>): Promise<T | undefined> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined || Date.now() >= end) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const TERMINAL = new Set(['succeeded', 'declined', 'canceled']);
const CARD = { exp_month: 12, exp_year: new Date().getUTCFullYear() + 3, cvc: '123' };
export const spaced = (card: string) => card.replace(/(\d{4})(?=\d)/g, '$1 ');

/** `POST /pay/widget-token` on the merchant backend, with what the checkout page sends: the order's id, nothing else. */
export async function mint(ctx: DemoContext, order: CommerceOrder): Promise<{ widgetToken: string; expiresAt: string }> {
  const answer = await call('POST', `${ctx.stack.merchantUrl}/pay/widget-token`, { orderId: String(order.entity_id) });
  check(answer.status === 200 && typeof answer.body.widget_token === 'string', 'the merchant route to answer 200 with a widget_token', describe(answer));
  return { widgetToken: answer.body.widget_token as string, expiresAt: String(answer.body.expires_at) };
}

export async function lookup(ctx: DemoContext, widgetToken: string): Promise<Answer> {
  const answer = await call('POST', `${ctx.stack.sandbox.paymentUrl}/api/v1/checkout/lookup`, { widget_token: widgetToken });
  check(answer.status === 200, 'lookup to answer 200', describe(answer));
  return answer;
}

export async function payByCard(ctx: DemoContext, widgetToken: string, number: string): Promise<{ paymentId: string; clientToken: string }> {
  const answer = await call('POST', `${ctx.stack.sandbox.paymentUrl}/api/v1/mobile/checkout`, { widget_token: widgetToken, card: { number, ...CARD } });
  check(answer.status === 201 && typeof answer.body.payment_id === 'string', 'mobile checkout to answer 201 with a payment_id', describe(answer));
  return { paymentId: answer.body.payment_id as string, clientToken: answer.body.payment_client_token as string };
}

/** Polls the status endpoint with the payment client token, as the widget does, until a terminal status or the budget ends. */
export async function pollStatus(ctx: DemoContext, paymentId: string, clientToken: string, budgetMs: number): Promise<{ statuses: string[]; last: Answer }> {
  const statuses: string[] = [];
  const end = Date.now() + budgetMs;
  for (;;) {
    const last = await call('GET', `${ctx.stack.sandbox.paymentUrl}/api/v1/payments/${paymentId}/status`, undefined, { authorization: `Bearer ${clientToken}` });
    check(last.status === 200, 'the status endpoint to answer 200', describe(last));
    statuses.push(String(last.body.status));
    if (TERMINAL.has(String(last.body.status)) || Date.now() >= end) return { statuses, last };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** `processing ×2, succeeded`. */
export function sequence(statuses: string[]): string {
  const runs: Array<[string, number]> = [];
  for (const s of statuses) {
    const last = runs.at(-1);
    if (last?.[0] === s) last[1] += 1;
    else runs.push([s, 1]);
  }
  return runs.map(([s, n]) => (n > 1 ? `${s} ×${n}` : s)).join(', ');
}

import { createPay, type Pay, type PayOptions } from 'paywidget-server';
import { startSandbox, type CommerceSandboxOptions, type Sandbox } from 'paywidget-server/sandbox';

/** HTTP policy for tests: quick retries, short deadlines. */
export const FAST_HTTP = { attemptTimeoutMs: 2_000, totalTimeoutMs: 5_000, backoffBaseMs: 5, backoffMaxMs: 20, maxRetries: 2 };

export function commerceSandbox(options: CommerceSandboxOptions = {}, now?: () => number): Promise<Sandbox> {
  return startSandbox({ commerce: options, ...(now ? { now } : {}) });
}

/** A pay instance wired to both sandboxes. */
export function payFor(sb: Sandbox, overrides: Partial<PayOptions> = {}): Pay {
  return createPay({
    env: {},
    payment: { apiUrl: sb.paymentUrl, merchantId: sb.merchantId, apiKey: sb.apiKey, webhookSecret: sb.webhookSecret },
    http: FAST_HTTP,
    ...overrides,
    commerce: { url: sb.commerceUrl, username: sb.commerceUsername, password: sb.commercePassword, ...overrides.commerce },
  });
}

export { rejection } from '../../helpers/pay-errors.js';

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

export const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

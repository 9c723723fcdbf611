import { expect } from 'vitest';
import { createPay, type Pay, type PayOptions } from 'paywidget-server';
import type { MountedApp } from './behaviour.js';

/** A Pay whose payment service is nowhere: for what an adapter does before any upstream call. */
export function offlinePay(overrides: Partial<PayOptions> = {}): Pay {
  return createPay({ env: {}, payment: { apiUrl: 'http://127.0.0.1:9', merchantId: 'm', apiKey: 'k', webhookSecret: 'w' }, ...overrides });
}

/** An offline Pay whose resolveCheckout records every body it is given (the mint after it reaches nothing). */
export function payRecordingCheckouts(): { pay: Pay; seen: unknown[] } {
  const seen: unknown[] = [];
  const pay = offlinePay({ http: { maxRetries: 0 }, resolveCheckout: ({ body }) => {
    seen.push(body);
    return { amount: 100, currency: 'EUR', orderId: 'o-1' };
  } });
  return { pay, seen };
}

/** A form POST to /widget-token refused (415) before any checkout was resolved, whatever parsed it; `app` is closed after. */
export async function expectFormBodyRefused(app: MountedApp, seen: unknown[]): Promise<void> {
  try {
    const answer = await app.send({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'orderId=f1' });
    expect([answer.status, JSON.parse(answer.text).error.code]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
    expect(seen).toEqual([]);
  } finally {
    await app.close();
  }
}

import { createPay, type Pay, type PayOptions } from 'paywidget-server';

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

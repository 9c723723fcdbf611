import { createPay, type Pay, type PayOptions } from './pay.js';

/** Adapters take a configured instance or options (environment fallbacks) to create one. */
export function resolvePay(payOrOptions?: Pay | PayOptions): Pay {
  const candidate = payOrOptions as Partial<Pay> | undefined;
  return typeof candidate?.handle === 'function' ? (payOrOptions as Pay) : createPay(payOrOptions as PayOptions | undefined);
}

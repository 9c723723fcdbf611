import { isPending } from './awaitable.js';
import { PayError } from './errors.js';
import { describeKind } from './option-types.js';
import { createPay, type Pay, type PayOptions } from './pay.js';

/** Adapters take a configured instance or options (environment fallbacks) to create one. */
export function resolvePay(payOrOptions?: Pay | PayOptions): Pay {
  if (payOrOptions !== undefined && (typeof payOrOptions !== 'object' || payOrOptions === null || Array.isArray(payOrOptions))) {
    // createPay would answer about its options; the mistake here is the adapter's argument (payMiddleware(null), payMiddleware('/pay')).
    throw new PayError('CONFIG_INVALID', `paywidget-server: the adapter was given ${describeKind(payOrOptions)} instead of a Pay instance. Pass the instance createPay() made (payMiddleware(pay), payRouter(pay), createRouteHandlers(pay)), or createPay's options object, or nothing to configure from the environment.`);
  }
  const candidate = payOrOptions as (Partial<Pay> & Record<string, unknown>) | undefined;
  if (typeof candidate?.handle === 'function') return payOrOptions as Pay;
  // Plain JavaScript makes these two mistakes without a word from the compiler; as options, both read as empty.
  if (isPending(candidate)) {
    throw new PayError('CONFIG_INVALID', 'paywidget-server: the adapter was given a Promise, not a Pay instance: await it first (payMiddleware(await makePay())), else a second instance built from the environment would take your webhooks and run none of your handlers.');
  }
  if (typeof candidate === 'object' && candidate !== null && (('socket' in candidate && 'headers' in candidate) || ('req' in candidate && 'res' in candidate))) {
    throw new PayError('CONFIG_INVALID', "paywidget-server: the adapter was mounted without being called, so it got a request instead of a Pay instance. Call it: app.use('/pay', payMiddleware(pay)) in Express, app.use(payRouter(pay).routes()) in Koa, export default createPagesHandler(pay) in Next.");
  }
  return createPay(payOrOptions as PayOptions | undefined);
}

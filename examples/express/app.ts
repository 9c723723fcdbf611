import express from 'express';
import type { Pay, WidgetScriptTagOptions } from 'paywidget-server';
import { payMiddleware } from 'paywidget-server/express';
import { orders } from '../shared/orders.js';
import { checkoutPage, returnPage } from './checkout-page.js';

/**
 * A merchant backend: the library on /pay, mounted before express.json() so webhooks keep
 * their raw bytes, and the merchant's own JSON routes after it. `widget` says where the checkout page
 * loads the widget from (default: PAY_WIDGET_HOST, PAY_WIDGET_INTEGRITY, PAY_API_URL).
 */
export function createApp(pay: Pay, options: { widget?: Omit<WidgetScriptTagOptions, 'nonce'> } = {}): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.use('/pay', payMiddleware(pay));
  app.use(express.json());
  app.get(['/', '/checkout'], checkoutPage(options.widget)); // ?orderId=1001 (&email=shopper@example.com for saved cards)
  app.get('/checkout/return', returnPage(pay, (id) => orders.get(id)?.status === 'paid')); // where the bank sends the shopper back
  app.get('/health', (_req, res) => {
    res.json({ ok: true });
  });
  // Last: what failed in the merchant's own routes (a body that is not JSON, say) answers JSON, without
  // Express's default page, which shows the stack trace unless NODE_ENV is production.
  app.use((error: { status?: number; expose?: boolean; message?: string }, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    const status = typeof error.status === 'number' && error.status >= 400 && error.status < 600 ? error.status : 500;
    if (status >= 500) console.error('request failed:', error);
    res.status(status).json({ error: { message: status < 500 && error.expose ? error.message : 'The request failed.' } });
  });
  return app;
}

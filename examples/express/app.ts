import express from 'express';
import type { Pay, WidgetScriptTagOptions } from 'paywidget-server';
import { payMiddleware } from 'paywidget-server/express';
import { checkoutPage } from './checkout-page.js';

/**
 * A merchant backend: the library on /pay, mounted before express.json() so webhooks keep
 * their raw bytes, and the merchant's own JSON routes after it. `widget` says where the checkout page
 * loads the widget from (default: PAY_WIDGET_HOST, PAY_WIDGET_INTEGRITY, PAY_API_URL).
 */
export function createApp(pay: Pay, options: { widget?: Omit<WidgetScriptTagOptions, 'nonce'> } = {}): express.Express {
  const app = express();
  app.use('/pay', payMiddleware(pay));
  app.use(express.json());
  app.get(['/', '/checkout'], checkoutPage(options.widget)); // ?orderId=1001 (&email=shopper@example.com for saved cards)
  app.get('/health', (_req, res) => {
    res.json({ ok: true });
  });
  return app;
}

import express from 'express';
import type { Pay } from 'paywidget-server';
import { payMiddleware } from 'paywidget-server/express';

/**
 * A merchant backend: the library on /pay, mounted before express.json() so webhooks keep
 * their raw bytes, and the merchant's own JSON routes after it.
 */
export function createApp(pay: Pay): express.Express {
  const app = express();
  app.use('/pay', payMiddleware(pay));
  app.use(express.json());
  app.get('/health', (_req, res) => {
    res.json({ ok: true });
  });
  return app;
}

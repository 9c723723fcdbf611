import type { ServerResponse } from 'node:http';
import { compilePath, matchPath } from '../shared/router.js';

/**
 * The endpoints the widget frame calls from the browser. Never `POST /api/v1/checkout/init`: minting
 * carries merchant credentials and is server-side only, so the browser gets no CORS answer for it.
 */
const SDK_PATHS = [
  '/api/v1/checkout/lookup',
  '/api/v1/mobile/checkout',
  '/api/v1/checkout',
  '/api/v1/payments/:payment_id/status',
  '/api/v1/saved-payment-methods/:id',
  '/api/v1/payment-methods/:id/set-default',
].map(compilePath);

/**
 * CORS for the widget origin on the SDK endpoints: sets `Access-Control-Allow-Origin` on every answer
 * (errors and injected faults included, so the frame can read them) and answers the preflight itself
 * (returns true). Other origins and other paths get no CORS headers at all.
 */
export function applyCors(widgetOrigin: string, method: string, path: string, res: ServerResponse): boolean {
  if (!SDK_PATHS.some((pattern) => matchPath(pattern, path))) return false;
  res.setHeader('vary', 'Origin');
  if (!widgetOrigin || res.req.headers.origin !== widgetOrigin) return false;
  res.setHeader('access-control-allow-origin', widgetOrigin);
  if (method !== 'OPTIONS') return false;
  res.writeHead(204, {
    'access-control-allow-methods': 'GET, POST, DELETE',
    'access-control-allow-headers': 'Content-Type, Authorization',
    'access-control-max-age': '600',
  }).end();
  return true;
}

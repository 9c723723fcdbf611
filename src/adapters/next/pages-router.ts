import type { IncomingMessage, ServerResponse } from 'node:http';
import { toPayError } from '../../core/errors.js';
import type { Pay, PayOptions } from '../../core/pay.js';
import { resolvePay } from '../../core/resolve-pay.js';
import { routeNotFound } from '../../core/router.js';
import { sendPayResponse, toPayRequest } from '../node/index.js';

type PagesRequest = IncomingMessage & { query: Partial<Record<string, string | string[]>>; body?: unknown };

export interface PagesHandlerOptions {
  /** Name of the catch-all segment: `pages/api/pay/[...path].ts` → 'path'. */
  param?: string;
}

/**
 * A Pages Router API route for every route of the library, in `pages/api/pay/[...path].ts`:
 *   export default createPagesHandler(pay);
 *   export const config = { api: { bodyParser: false } };   // webhooks need the raw body
 * Next reads `config` statically from the page file itself, so it cannot be re-exported from here.
 */
export function createPagesHandler(payOrOptions?: Pay | PayOptions, { param = 'path' }: PagesHandlerOptions = {}) {
  const pay = resolvePay(payOrOptions);
  return async function paywidgetPagesHandler(req: PagesRequest, res: ServerResponse): Promise<void> {
    const segments = req.query[param];
    const path = '/' + (Array.isArray(segments) ? segments.join('/') : segments ?? '');
    try {
      const response = await pay.handle(await toPayRequest(req, path, pay.maxBodyBytes));
      sendPayResponse(res, response ?? routeNotFound(path));
    } catch (error) {
      sendPayResponse(res, toPayError(error).toResponse());
    }
  };
}

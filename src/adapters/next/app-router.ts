import { toPayError } from '../../core/errors.js';
import type { Pay, PayOptions } from '../../core/pay.js';
import { resolvePay } from '../../core/resolve-pay.js';
import { routeNotFound } from '../../core/router.js';
import { readLimited } from '../../core/read-limited.js';
import { bodyTooLarge, READ_LIMIT_OPTIONS } from '../../core/request-body.js';
import type { PayResponse } from '../../core/types.js';

type RouteContext = { params: Promise<Record<string, string | string[] | undefined>> | Record<string, string | string[] | undefined> };
type RouteHandler = (request: Request, context: RouteContext) => Promise<Response>;

export interface RouteHandlerOptions {
  /** Name of the catch-all segment: `app/api/pay/[...path]/route.ts` → 'path'. */
  param?: string;
}

/**
 * Route handlers for an App Router catch-all route. Uses only Fetch APIs, so the route may run
 * on the Node.js or the edge runtime:
 *   export const { GET, POST } = createRouteHandlers(pay);
 */
export function createRouteHandlers(payOrOptions?: Pay | PayOptions, { param = 'path' }: RouteHandlerOptions = {}): { GET: RouteHandler; POST: RouteHandler } {
  const pay = resolvePay(payOrOptions);

  const handler: RouteHandler = async (request, context) => {
    const path = catchAllPath((await context.params)[param]);
    if (!pay.matches(request.method, path)) return toFetchResponse(routeNotFound(path));
    let response: PayResponse | null;
    try {
      // A body read before us (a wrapper that called request.json()) cannot be read again: the webhook route names the fix.
      const rawBody = request.method === 'GET' || request.bodyUsed ? undefined : await readBody(request, pay.maxBodyBytes);
      response = await pay.handle({ method: request.method, path, headers: request.headers, rawBody, framework: 'next-app' });
    } catch (error) {
      response = toPayError(error).toResponse();
    }
    return response === null ? toFetchResponse(routeNotFound(path)) : toFetchResponse(response);
  };

  return { GET: handler, POST: handler };
}

/**
 * The path below the mount point from a catch-all segment (`[...path]`): ['payments', 'p1'] → '/payments/p1'.
 * Next hands the segments over decoded and the core router decodes path params, so each is encoded again
 * (else `a%2541` would reach a route as `aA`, and a decoded `/` would split a segment in two).
 */
export function catchAllPath(segments: string | string[] | undefined): string {
  const list = Array.isArray(segments) ? segments : segments === undefined ? [] : [segments];
  return '/' + list.map(encodeURIComponent).join('/');
}

/** Reads a Fetch body with a byte limit, without buffering past it. */
async function readBody(request: Request, limit: number): Promise<Uint8Array> {
  const tooLarge = () => bodyTooLarge(limit, READ_LIMIT_OPTIONS);
  if (Number(request.headers.get('content-length') ?? 0) > limit) throw tooLarge();
  return readLimited(request.body, limit, tooLarge, { drainPastLimit: true });
}

function toFetchResponse(response: PayResponse): Response {
  return new Response(response.body as BodyInit, { status: response.status, headers: response.headers });
}

import { controlFlowIn } from '../../core/control-flow.js';
import { PayError, toPayError } from '../../core/errors.js';
import { isBodiless } from '../../core/json-response.js';
import type { Pay, PayOptions } from '../../core/pay.js';
import { resolvePay } from '../../core/resolve-pay.js';
import { discard, readLimited } from '../../core/read-limited.js';
import { bodyNotDecompressed, bodyTooLarge, bodyUnreadable, READ_LIMIT_OPTIONS, requestCoding } from '../../core/request-body.js';
import type { PayRequest, PayResponse } from '../../core/types.js';
import { catchAllPath, notARoute } from './catch-all.js';

// A promise, as Next 15 and later pass it (and the type their build checks a route's exports against); Next 14's plain
// object is awaited all the same.
type RouteContext = { params: Promise<Record<string, string | string[] | undefined>> };
type RouteHandler = (request: Request, context: RouteContext) => Promise<Response>;

/** Options of `createRouteHandlers()`. */
export interface RouteHandlerOptions {
  /** Name of the catch-all segment: `app/api/pay/[...path]/route.ts` → 'path'. */
  param?: string | undefined;
}

/**
 * Route handlers for an App Router catch-all route. Uses only Fetch APIs, so the route may run
 * on the Node.js or the edge runtime:
 *   export const { GET, POST, OPTIONS } = createRouteHandlers(pay);
 */
export function createRouteHandlers(payOrOptions?: Pay | PayOptions, { param = 'path' }: RouteHandlerOptions = {}): { GET: RouteHandler; POST: RouteHandler; OPTIONS: RouteHandler } {
  const pay = resolvePay(payOrOptions);
  const catchAll = { param, factory: 'createRouteHandlers' } as const;

  const handler: RouteHandler = async (request, context) => {
    // Exported from pages/api, it gets Node's req and res: the Response it returns would never be sent (a hang in production).
    if (typeof (request as { headers?: { get?: unknown } } | undefined)?.headers?.get !== 'function') throw notAFetchRequest();
    // A wrapper that passes the Request alone (`return handlers.POST(req)`) leaves no way to tell the path.
    const awaited: unknown = typeof context === 'object' && context !== null ? await context.params : undefined;
    if (typeof awaited !== 'object' || awaited === null) {
      // Next passes { params: undefined } to a route file with no dynamic segment: the context came, without a path.
      const noCatchAll = typeof context === 'object' && context !== null && 'params' in context && context.params === undefined;
      // Thrown, so that Next logs the fix and answers 500 (a sender retries); the caller is not who can fix it.
      throw noCatchAll ? noCatchAllSegment(request.method) : missingContext(request.method);
    }
    const params = awaited as Record<string, string | string[] | undefined>;
    const path = catchAllPath(params[param]);
    if (!pay.matches(request.method, path)) return toFetchResponse(notARoute(pay, request.method, params, catchAll));
    let response: PayResponse | null;
    try {
      // Only a route that runs reads the body, as in the Node bridge: a 405 or an OPTIONS answers whatever was sent.
      const limit = pay.bodyLimit(request.method, path);
      const body = limit !== undefined ? await readBody(request, limit) : {};
      response = await pay.handle({ method: request.method, path, headers: request.headers, ...body, framework: 'next-app', native: request, signal: request.signal });
    } catch (error) {
      // redirect(), notFound() and the like in a hook: thrown on, for Next's route module to answer (307, 404...).
      if (controlFlowIn(error, 'next-app') !== undefined) throw error;
      response = toPayError(error).toResponse();
    }
    return toFetchResponse(response ?? notARoute(pay, request.method, params, catchAll));
  };

  return { GET: handler, POST: handler, OPTIONS: handler };
}

/** Thrown, so that the Pages Router answers 500 and logs it: what a handler returns there is not sent. */
function notAFetchRequest(): PayError {
  return new PayError('CONFIG_INVALID', 'paywidget-server: a createRouteHandlers handler was called with something that is not a Fetch Request, such as Node\'s req in a Pages Router API route (pages/api), where the Response it returns would never be sent. In pages/api, use createPagesHandler: export default createPagesHandler(pay), with export const config = { api: { bodyParser: false } }. createRouteHandlers is for the App Router (app/api/pay/[...path]/route.ts).');
}

/** The handler was called without the route context Next passes as its second argument. */
function missingContext(method: string): PayError {
  // Next serves HEAD with the GET handler.
  const name = method === 'HEAD' ? 'GET' : ['GET', 'POST', 'OPTIONS'].includes(method) ? method : 'POST';
  return new PayError('CONFIG_INVALID', `paywidget-server: createRouteHandlers' ${name} handler was called without the route context, so it cannot tell which route was asked for. Pass on both arguments Next gives: export async function ${name}(request, context) { return handlers.${name}(request, context); }, or export the handlers themselves: export const { GET, POST, OPTIONS } = createRouteHandlers(pay).`);
}

/** The handlers were exported from a route file outside a catch-all folder (app/api/pay/webhooks/route.ts). */
function noCatchAllSegment(method: string): PayError {
  return new PayError('CONFIG_INVALID', `paywidget-server: createRouteHandlers' handlers are exported from a route with no catch-all segment (Next passed no params for ${method}), so they cannot tell which of the library's routes was asked for. Put the route file in a catch-all folder, app/api/pay/[...path]/route.ts: it serves every route below /api/pay, POST /api/pay/webhooks among them.`);
}

/** What DecompressionStream reads (no Brotli there); Next's edge runtime has none, see `cannotDecompressHere`. */
const FETCH_CODINGS: ReadonlySet<string> = new Set(['gzip', 'deflate']);

/**
 * Reads a Fetch body with a byte limit, without buffering past it. A body read before us (a wrapper
 * that called request.json()) cannot be read again: the routes that need it say how to fix that.
 */
async function readBody(request: Request, limit: number): Promise<Pick<PayRequest, 'rawBody' | 'bodyUsed'>> {
  if (request.method === 'GET' || request.method === 'HEAD') return {};
  if (request.bodyUsed) return { bodyUsed: true };
  const coding = requestCoding(request.headers.get('content-encoding'), FETCH_CODINGS);
  const tooLarge = () => bodyTooLarge(limit, READ_LIMIT_OPTIONS);
  if (Number(request.headers.get('content-length') ?? 0) > limit) throw tooLarge();
  if (coding === undefined || request.body === null) {
    try {
      return { rawBody: await readLimited(request.body, limit, tooLarge, { drainPastLimit: true }) };
    } catch (error) {
      if (error instanceof PayError) throw error;
      throw bodyUnreadable('the client aborted, or something locked the Request\'s body before createRouteHandlers got it: hand the Request over unread', error);
    }
  }
  return { rawBody: await readCompressed(request, request.body, coding, limit, tooLarge) };
}

/**
 * A compressed body, decompressed as it is read and counted after: a small body may expand without end. Past the limit,
 * or on bytes that do not decompress, the rest of the body is read as it is and dropped (never decompressed), so that
 * the connection can take the next request.
 */
async function readCompressed(request: Request, body: ReadableStream<Uint8Array>, coding: string, limit: number, tooLarge: () => PayError): Promise<Uint8Array> {
  let decompress: DecompressionStream;
  try {
    decompress = new DecompressionStream(coding as CompressionFormat);
  } catch (error) {
    discard(body);
    throw cannotDecompressHere(coding, error);
  }
  // preventCancel: a decompression that stops leaves the body itself to be drained below, not cancelled.
  const piped = body.pipeTo(decompress.writable as WritableStream<Uint8Array>, { preventCancel: true }).then(() => true, () => false);
  try {
    return await readLimited(decompress.readable, limit, tooLarge);
  } catch (error) {
    if (!(await piped)) discard(body);
    if (error instanceof PayError) throw error;
    if (!request.signal.aborted) throw bodyNotDecompressed(coding, error);
    throw bodyUnreadable('the client aborted', error);
  }
}

/** Next's edge runtime has DecompressionStream only as a stand-in that throws when made: 415, saying why. */
function cannotDecompressHere(coding: string, cause: unknown): PayError {
  return new PayError('UNSUPPORTED_MEDIA_TYPE', `The request body is encoded as "${coding}" (Content-Encoding), which this runtime cannot decompress (Next.js's edge runtime has no DecompressionStream). Send the body uncompressed, or serve this route on the Node.js runtime (no export const runtime = 'edge').`, { cause });
}

/** A 204 or 304 carries no body: a Fetch Response refuses one, even empty. */
function toFetchResponse(response: PayResponse): Response {
  return new Response(isBodiless(response.status) ? null : (response.body as BodyInit), { status: response.status, headers: response.headers });
}

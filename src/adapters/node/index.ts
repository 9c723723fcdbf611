import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable, Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import getRawBody from 'raw-body';
import { toPayError } from '../../core/errors.js';
import { isBodiless } from '../../core/json-response.js';
import type { Pay } from '../../core/pay.js';
import { bodyNotDecompressed, bodyTooLarge, bodyUnreadable, READ_LIMIT_OPTIONS, requestCoding } from '../../core/request-body.js';
import type { Framework, PayRequest, PayResponse } from '../../core/types.js';

/** Where a body parser that ran before us may have left the body: `req` in Express and Next, `ctx.request` in Koa. */
export interface ParsedBodyHolder {
  body?: unknown;
  rawBody?: unknown;
}

/** Where a request came from: the framework (named in errors) and where its body parser may have left the body. */
export interface NodeRequestSource {
  framework?: Framework | undefined;
  /** `req` by default. */
  parsed?: ParsedBodyHolder;
  /** What the hooks get as `native`: `req` by default, Koa's `ctx`. */
  native?: unknown;
}

/** Where koa-body keeps the text as sent, with `{ includeUnparsed: true }`, on the object it parsed. */
const UNPARSED_BODY = Symbol.for('unparsedBody');

function unparsedBody(body: unknown): unknown {
  return typeof body === 'object' && body !== null ? (body as { [UNPARSED_BODY]?: unknown })[UNPARSED_BODY] : undefined;
}

/**
 * The one bridge from Node's request to the core's plain request. Body, in order of preference:
 * a raw body someone kept (`req.rawBody`, or a Buffer or string `req.body` from express.raw() or express.text()), the stream
 * itself (read with raw-body and a size limit), or an object a JSON parser already made. With `maxBodyBytes`
 * undefined the stream is left unread: no route runs for the request, and the app or Node may read it.
 */
export async function toPayRequest(req: IncomingMessage, path: string, maxBodyBytes: number | undefined, source: NodeRequestSource = {}, res?: ServerResponse): Promise<PayRequest> {
  const { framework, parsed = req as ParsedBodyHolder, native = req } = source;
  const request = new NodePayRequest(req.method ?? 'GET', path, req.headers, framework, native, res);
  const raw = parsed.rawBody ?? unparsedBody(parsed.body) ?? parsed.body;
  // A body a parser already read came under its own limit, maybe higher than ours: each route holds its own.
  // A string is the text as sent (express.text(), Next's parser for text/plain, a verify hook's rawBody).
  if (Buffer.isBuffer(raw) || typeof raw === 'string') {
    request.rawBody = raw as Buffer | string;
  } else if (req.readableEnded || req.readableDidRead) {
    // A parser consumed the stream; never wait on it. JSON routes can use the object, webhooks cannot.
    // (A parser that only set `req.body = {}` without reading, as Express 4's do for other content
    // types, left the stream to us: it is read below.)
    if (parsed.body !== undefined) request.parsedBody = parsed.body;
    // Read by the app's own code (a body logger, getRawBody(req)) and kept nowhere: not an empty body, unless it was
    // one. A GET or HEAD lost nothing either: its body is never read.
    else if (request.method !== 'GET' && request.method !== 'HEAD') {
      if (sentNoBody(req)) request.rawBody = Buffer.alloc(0);
      else request.bodyUsed = true;
    }
  } else if (maxBodyBytes !== undefined && request.method !== 'GET' && request.method !== 'HEAD') {
    let coding: string | undefined;
    try {
      coding = requestCoding(req.headers['content-encoding'], NODE_CODINGS);
    } catch (error) {
      req.resume(); // discarded, so a keep-alive connection can take the next request
      throw error;
    }
    request.rawBody = await readStream(req, maxBodyBytes, coding);
  }
  return request;
}

/**
 * Whether the request came without a body: a Content-Length of 0, or HTTP/1 with neither it nor Transfer-Encoding
 * (RFC 9112 §6.3: `curl -X POST` sends that). HTTP/2 may leave the length out of a body it frames, so only its 0 says so.
 */
function sentNoBody(req: IncomingMessage): boolean {
  const { headers } = req;
  if (headers['content-length'] !== undefined) return headers['content-length'] === '0';
  return req.httpVersionMajor === 1 && headers['transfer-encoding'] === undefined;
}

/**
 * The core's request, made from Node's. Its `signal` aborts when the response closes before it was sent in
 * full (the client went away); it is made only when a route asks, from the prototype: the webhook route never
 * does, and it is the hot path.
 */
class NodePayRequest implements PayRequest {
  declare rawBody?: Uint8Array | string;
  declare parsedBody?: unknown;
  declare bodyUsed?: boolean;
  readonly #res: ServerResponse | undefined;
  #signal: AbortSignal | undefined;

  constructor(
    readonly method: string,
    readonly path: string,
    readonly headers: IncomingMessage['headers'],
    readonly framework: Framework | undefined,
    readonly native: unknown,
    res: ServerResponse | undefined,
  ) {
    this.#res = res;
  }

  get signal(): AbortSignal | undefined {
    const res = this.#res;
    if (this.#signal !== undefined || res === undefined) return this.#signal;
    const controller = new AbortController();
    const gone = () => controller.abort(new Error('The client closed the connection before its answer was sent.'));
    // A response ended and sent in full is no client gone. Ended too: HTTP/2's compatibility response says
    // finished once its stream is gone, the client having reset it or not.
    const closed = () => (res.writableEnded && res.writableFinished) || gone();
    if (isGone(res)) closed();
    else res.once('close', closed);
    return (this.#signal = controller.signal);
  }
}

/**
 * The codings a body read here is decompressed from, as body-parser does (`x-gzip` is read as `gzip`; `deflate` is
 * zlib-wrapped, as HTTP and DecompressionStream have it). Strict, unlike an upstream answer's decoders: a body cut short
 * fails its check (CRC, length, Adler-32) and is refused, not read for what it holds.
 */
const NODE_DECODERS: Record<string, () => Transform> = { gzip: createGunzip, deflate: createInflate, br: createBrotliDecompress };
const NODE_CODINGS: ReadonlySet<string> = new Set(Object.keys(NODE_DECODERS));

/** The body, decompressed when it came `coding`, up to `limit` bytes (after decompression: a small body may expand without end). */
async function readStream(req: IncomingMessage, limit: number, coding: string | undefined): Promise<Buffer> {
  const decoder = coding === undefined ? undefined : NODE_DECODERS[coding]!();
  const declared = req.headers['content-length'] ?? null;
  // Refused at once, without waiting for a byte of it (compressed, it would expand further still).
  if (Number(declared) > limit) {
    req.resume();
    throw bodyTooLarge(limit, READ_LIMIT_OPTIONS);
  }
  let source: Readable = req;
  let clientGone = false;
  if (decoder) {
    // pipe() passes no error on: a client that goes away mid-body must end the read, not leave it waiting.
    const gone = () => {
      clientGone = true;
      decoder.destroy(new Error('the client went away mid-body'));
    };
    req.once('aborted', gone).once('error', gone);
    source = req.pipe(decoder);
  }
  try {
    // The declared length checks what arrives, uncompressed (raw-body refuses a body that does not match it).
    return await getRawBody(source, { limit, length: decoder ? null : declared });
  } catch (error) {
    // raw-body leaves the stream paused part-way; read the rest and discard it (as body-parser does), else a
    // keep-alive connection never finishes this request and the next one waits until requestTimeout.
    req.unpipe();
    req.resume();
    decoder?.destroy();
    const type = (error as { type?: string }).type;
    if (type === 'entity.too.large') {
      throw bodyTooLarge(limit, READ_LIMIT_OPTIONS, error);
    }
    // Any other failure of a decoder (zlib's Z_*, Brotli's ERR__ERROR_*) is the body's, unless the client went away.
    if (coding !== undefined && !clientGone) throw bodyNotDecompressed(coding, error);
    throw bodyUnreadable('the client aborted or sent a wrong Content-Length', error);
  }
}

/** Whether the response can no longer be written: destroyed, or (HTTP/2, whose response has no `destroyed`) its stream. */
function isGone(res: ServerResponse): boolean {
  return res.destroyed === true || (res as { stream?: { destroyed?: boolean } }).stream?.destroyed === true;
}

/** Writes a core response to Node's response. */
export function sendPayResponse(res: ServerResponse, response: PayResponse): void {
  // Something else answered first (a request time-out middleware): writing again would throw, and on
  // Express 4, which ignores a middleware's promise, the throw would end the process.
  if (res.headersSent || res.writableEnded || isGone(res)) return;
  // writeHead keeps headers set earlier (CORS middleware) and skips setHeader's per-call bookkeeping; it fixes
  // the headers at once, so the length is given here (else the answer goes out chunked). A HEAD answer brings
  // the length its GET would have had. A 204 or 304 carries no body and must not claim a length (RFC 9110).
  res.writeHead(response.status, isBodiless(response.status) ? response.headers : { 'content-length': Buffer.byteLength(response.body), ...response.headers });
  res.end(response.body);
}

/**
 * What every Node-based adapter does with a request: bridge it, let the core answer, and turn a
 * failure to read the body into the library's JSON error. Null: not one of our routes.
 */
export async function handleNodeRequest(pay: Pay, req: IncomingMessage, res: ServerResponse, path: string, source?: NodeRequestSource): Promise<PayResponse | null> {
  try {
    // Only a route that runs reads the body, up to its own limit: a 405, an OPTIONS or another app's path answers whatever was sent.
    const limit = pay.bodyLimit(req.method ?? 'GET', path);
    return await pay.handle(await toPayRequest(req, path, limit, source, res));
  } catch (error) {
    return toPayError(error).toResponse();
  }
}

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError, errorBody, readBody, type Reply } from './http.js';
import { drained } from '../../core/drained.js';
import { jsonChunks } from './json-chunks.js';
import type { Router } from './router.js';
import { Sleeper } from './sleeper.js';

/** What a fault hook may do with a request before routing: nothing, or answer it itself (true). */
export type BeforeRoute = (method: string, path: string, res: ServerResponse) => Promise<boolean>;

export async function writeReply(res: ServerResponse, reply: Reply): Promise<void> {
  if (res.headersSent || res.destroyed) return;
  const headers: Record<string, string> = { 'cache-control': 'no-store', ...reply.headers };
  let body: string | undefined;
  if (reply.html !== undefined) {
    headers['content-type'] = 'text/html; charset=utf-8';
    body = reply.html;
  } else if (reply.json !== undefined) {
    headers['content-type'] = 'application/json; charset=utf-8';
    const chunks = jsonChunks(reply.json);
    if (chunks.length > 1) return writeChunks(res, reply.status, headers, chunks);
    body = chunks[0];
  }
  res.writeHead(reply.status, headers).end(body);
}

/** A long answer chunk by chunk, waiting while the socket's buffer is full; a client that went away stops it. */
async function writeChunks(res: ServerResponse, status: number, headers: Record<string, string>, chunks: string[]): Promise<void> {
  let length = 0;
  for (const chunk of chunks) length += Buffer.byteLength(chunk);
  res.writeHead(status, { ...headers, 'content-length': String(length) });
  for (const chunk of chunks) {
    if (res.write(chunk)) continue;
    await drained(res);
    if (res.destroyed) return;
  }
  res.end();
}

export function errorReply(status: number, code: string, message: string, headers?: Record<string, string>): Reply {
  return { status, json: errorBody(code, message), ...(headers ? { headers } : {}) };
}

/** A `node:http` server on 127.0.0.1 that routes JSON requests and can be closed without waiting on anyone. */
export class SandboxServer {
  private readonly server: Server;
  private readonly sleeper = new Sleeper();
  private closing: Promise<void> | undefined;

  constructor(
    private readonly router: Router,
    private readonly beforeRoute?: BeforeRoute,
    /** How errors are answered; the payment service's `{"error":{code,message}}` by default. */
    private readonly formatError: (status: number, code: string, message: string, headers?: Record<string, string>) => Reply = errorReply,
  ) {
    this.server = createServer((req, res) => void this.handle(req, res));
    // Longer than the idle time of common clients (undici: 4 s), so the server is not the side that drops a reused socket.
    this.server.keepAliveTimeout = 10_000;
    this.server.headersTimeout = 15_000;
  }

  get closed(): boolean {
    return this.closing !== undefined;
  }

  async listen(port: number): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    const { port: bound } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${bound}`;
  }

  /** Waits `ms` unless the server closes first. */
  wait(ms: number): Promise<void> {
    return this.sleeper.sleep(ms);
  }

  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.sleeper.wakeAll();
      this.server.close(() => resolve());
      // Drops idle keep-alive sockets and requests that were told to hang.
      this.server.closeAllConnections();
    });
    return this.closing;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = (req.method ?? 'GET').toUpperCase();
    try {
      const url = requestUrl(req.url);
      const rawBody = await readBody(req);
      if (this.beforeRoute && (await this.beforeRoute(method, url.pathname, res))) return;
      const match = this.router.match(method, url.pathname);
      if (match.kind === 'not_found') throw new ApiError(404, 'not_found', `No route for ${method} ${url.pathname}.`);
      if (match.kind === 'method_not_allowed') {
        throw new ApiError(405, 'method_not_allowed', `${method} is not allowed on ${url.pathname}.`, { allow: match.allow.join(', ') });
      }
      await writeReply(res, await match.handler({ req, method, path: url.pathname, url, params: match.params, rawBody }));
    } catch (err) {
      if (err instanceof ApiError) await writeReply(res, this.formatError(err.status, err.code, err.message, err.headers));
      else await writeReply(res, this.formatError(500, 'internal_error', `Sandbox error: ${err instanceof Error ? err.message : String(err)}`));
    }
  }
}

/**
 * The request-target as a URL. A path is appended to an origin rather than resolved against it, so `//x`
 * keeps its path instead of naming a host; an absolute-form target is read as it is. One that is no URL
 * (`http://a:b:c/`) is a 400, never a crash of the process hosting the sandbox.
 */
export function requestUrl(target = '/'): URL {
  try {
    return new URL(target.startsWith('/') ? `http://127.0.0.1${target}` : target);
  } catch {
    throw new ApiError(400, 'bad_request', `The request-target ${JSON.stringify(target.slice(0, 100))} is not a path.`);
  }
}

import type { IncomingMessage } from 'node:http';
import { createHash, timingSafeEqual } from 'node:crypto';

/** An error the sandbox answers as `{"error":{"code","message"}}` with `status`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** What a route handler answers; the server writes it. */
export interface Reply {
  status: number;
  /** Serialized as JSON. Omitted (or undefined) means no body. */
  json?: unknown;
  /** A small HTML page instead of JSON. */
  html?: string;
  headers?: Record<string, string>;
}

export interface RequestContext {
  req: IncomingMessage;
  method: string;
  path: string;
  url: URL;
  params: Record<string, string>;
  rawBody: Buffer;
}

export const MAX_BODY_BYTES = 1024 * 1024;

export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on('end', () => {
      if (tooLarge) reject(new ApiError(413, 'payload_too_large', `The request body exceeds ${limit} bytes.`));
      else resolve(Buffer.concat(chunks));
    });
    req.on('error', reject);
  });
}

function mediaType(ctx: RequestContext): string {
  return (ctx.req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * The JSON object in the request body. An empty body counts as `{}`; a non-empty body must be sent
 * as `application/json` (415 otherwise), parse (400 `invalid_json`) and be an object (422).
 * `allowForm` also accepts `application/x-www-form-urlencoded` (the sandbox's HTML pages).
 */
export function jsonBody(ctx: RequestContext, options: { allowForm?: boolean } = {}): Record<string, unknown> {
  if (ctx.rawBody.length === 0) return {};
  const type = mediaType(ctx);
  if (options.allowForm && type === 'application/x-www-form-urlencoded') {
    return Object.fromEntries(new URLSearchParams(ctx.rawBody.toString('utf8')));
  }
  if (type !== 'application/json' && !type.endsWith('+json')) {
    throw new ApiError(415, 'unsupported_media_type', 'Send the request body as Content-Type: application/json.');
  }
  let value: unknown;
  try {
    value = JSON.parse(ctx.rawBody.toString('utf8'));
  } catch {
    throw new ApiError(400, 'invalid_json', 'The request body is not valid JSON.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ApiError(422, 'invalid_request', 'The request body must be a JSON object.');
  }
  return value as Record<string, unknown>;
}

export function header(ctx: RequestContext, name: string): string | undefined {
  const value = ctx.req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/** The token of an `Authorization: Bearer <token>` header, if any. */
export function bearerToken(ctx: RequestContext): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header(ctx, 'authorization') ?? '');
  return match?.[1];
}

/** Constant-time string comparison (over fixed-length digests, so lengths do not leak either). */
export function safeEqual(a: string, b: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(a), digest(b));
}

export function invalid(field: string, rule: string): ApiError {
  return new ApiError(422, 'invalid_request', `${field} ${rule}.`);
}

export function errorBody(code: string, message: string): { error: { code: string; message: string } } {
  return { error: { code, message } };
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

import { jsonTextResponse, NO_STORE } from './json-response.js';
import { parseRetryAfter } from './retry-after.js';
import type { PayResponse } from './types.js';

/**
 * Every error code the library raises, with the HTTP status the routes answer it with.
 * This table is the one place codes meet statuses.
 */
export const ERROR_STATUS = {
  CONFIG_INVALID: 500,
  CONFIG_MISSING: 500,
  INVALID_INPUT: 400,
  INVALID_JSON: 400,
  UNAUTHORIZED: 401,
  CHECKOUT_UNRESOLVED: 500,
  NOT_FOUND: 404,
  ORDER_NOT_PAYABLE: 409,
  ORDER_NOT_FOUND: 404,
  PAYMENT_NOT_FOUND: 404,
  COMMERCE_AUTH_FAILED: 502,
  COMMERCE_TWO_FACTOR_REQUIRED: 502,
  COMMERCE_ERROR: 502,
  METHOD_NOT_ALLOWED: 405,
  BODY_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UPSTREAM_ERROR: 502, // replaced by the upstream's own status in UpstreamError
  UPSTREAM_INVALID_RESPONSE: 502,
  UPSTREAM_UNREACHABLE: 502,
  UPSTREAM_TIMEOUT: 504,
  INTERNAL_ERROR: 500,
  WEBHOOK_MISSING_HEADER: 400,
  WEBHOOK_MALFORMED_SIGNATURE: 400,
  WEBHOOK_MALFORMED_TIMESTAMP: 400,
  WEBHOOK_TIMESTAMP_TOO_OLD: 400,
  WEBHOOK_TIMESTAMP_IN_FUTURE: 400,
  WEBHOOK_SIGNATURE_MISMATCH: 400,
  WEBHOOK_BODY_NOT_RAW: 500, // the receiver's setup (a body parser first), not the delivery: 5xx, so the sender retries once it is fixed
  WEBHOOK_INVALID_JSON: 400,
  WEBHOOK_REPLAYED: 400,
  // Every delivery of a service whose payload `id` is not the event id mismatches (webhooks.payloadEventId is the fix):
  // 5xx, so the sender retries once it is fixed. A replay sent under another id is refused all the same.
  WEBHOOK_EVENT_ID_MISMATCH: 500,
  WEBHOOK_HANDLER_FAILED: 500,
  DUPLICATE_IN_PROGRESS: 409,
  SYNC_IN_PROGRESS: 409,
  STORE_UNAVAILABLE: 503,
} as const;

/** Every code a PayError can carry; `ERROR_STATUS` maps each to its HTTP status. */
export type PayErrorCode = keyof typeof ERROR_STATUS;

export interface PayErrorOptions {
  cause?: unknown;
  /** Extra facts for code (never secrets), e.g. `{ field: 'amount' }`. */
  details?: Record<string, unknown> | undefined;
  /** Overrides the status from the table; only for errors that carry someone else's status. */
  status?: number;
}

/** Marks every PayError, whichever copy of the package made it (see `Symbol.hasInstance` below). */
const PAY_ERROR = Symbol.for('paywidget-server.PayError');

/** The one error type of the library: a stable UPPER_SNAKE `code`, an HTTP `status`, a message that says how to fix it. */
export class PayError extends Error {
  override readonly name: string = 'PayError';
  /** What went wrong, stable across versions: branch on this, not on the message. */
  readonly code: PayErrorCode;
  /** The HTTP status the library's routes answer with (`ERROR_STATUS[code]`, or the upstream's own status). */
  readonly status: number;
  /** Facts for code, never secrets: the field or option at fault (`{ field }`, `{ options }`), the service, the order. */
  readonly details: Record<string, unknown> | undefined;

  static {
    Object.defineProperty(this.prototype, PAY_ERROR, { value: true });
  }

  /**
   * An app that loads the package both with import and with require() (its own code one way, a dependency
   * the other) holds two PayError classes: an error from either is a PayError to both, by its mark. A subclass
   * (UpstreamError, …) is known by its name along the value's prototypes, which the build keeps, so the other
   * copy's UpstreamError is an UpstreamError too.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (typeof value !== 'object' || value === null || (value as { [PAY_ERROR]?: unknown })[PAY_ERROR] !== true) return false;
    if (this === PayError) return true;
    for (let proto: object | null = Object.getPrototypeOf(value) as object | null; proto !== null; proto = Object.getPrototypeOf(proto) as object | null) {
      if (proto === this.prototype || (Object.hasOwn(proto, 'constructor') && (proto as { constructor: { name?: unknown } }).constructor.name === this.name)) return true;
    }
    return false;
  }

  constructor(code: PayErrorCode, message: string, options: PayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = options.status ?? ERROR_STATUS[code];
    this.details = options.details;
  }

  /** The HTTP answer for this error: `{ error: { code, message, details? } }`, never cached (a 404 is cacheable by default). */
  toResponse(): PayResponse {
    const error: Record<string, unknown> = { code: this.code, message: this.message };
    if (this.details) error.details = this.details;
    return jsonTextResponse(this.status, JSON.stringify({ error }));
  }

  /** What `JSON.stringify` and loggers print: name, code, status, message and details (the cause stays out). */
  toJSON(): Record<string, unknown> {
    return { name: this.name, code: this.code, status: this.status, message: this.message, details: this.details };
  }
}

/**
 * The upstream answered with an error status. Its status, content-type, Retry-After and raw body
 * are kept so the merchant's caller sees exactly what the service said, and when to ask again.
 */
export class UpstreamError extends PayError {
  override readonly name = 'UpstreamError';
  /** Which upstream answered: `'payment'` or `'commerce'`. */
  readonly service: string;
  /** The upstream's Content-Type header, as sent. */
  readonly contentType: string | undefined;
  /** The service's Retry-After header (a 429 or 503), as sent. */
  readonly retryAfter: string | undefined;
  readonly #body: Uint8Array;

  constructor(service: string, status: number, contentType: string | undefined, body: Uint8Array, message?: string, retryAfter?: string) {
    super('UPSTREAM_ERROR', message ?? `The ${service} service answered HTTP ${status}.`, { status, details: { service } });
    this.service = service;
    this.contentType = contentType;
    this.retryAfter = retryAfter;
    this.#body = body;
  }

  /** How long the service asked to wait before the next call (ms), when it said. */
  get retryAfterMs(): number | undefined {
    return this.retryAfter === undefined ? undefined : parseRetryAfter(this.retryAfter);
  }

  /** The upstream body, byte for byte. */
  get body(): Uint8Array {
    return this.#body;
  }

  /** The upstream body decoded as UTF-8, for logs and messages. */
  get bodyText(): string {
    return new TextDecoder().decode(this.#body);
  }

  override toResponse(): PayResponse {
    // The upstream's status and body as they are; never cached, like every answer of the library.
    const headers: Record<string, string> = { 'cache-control': NO_STORE };
    if (this.contentType) headers['content-type'] = this.contentType;
    if (this.retryAfter) headers['retry-after'] = this.retryAfter;
    return { status: this.status, headers, body: this.#body };
  }
}

/** A 400 naming the input field that is wrong; the message says how to fix it. */
export function invalidInput(field: string, message: string): PayError {
  return new PayError('INVALID_INPUT', message, { details: { field } });
}

/** Whatever was thrown, as a PayError (unknown errors become INTERNAL_ERROR with a message that reveals nothing). */
export function toPayError(error: unknown): PayError {
  if (error instanceof PayError) return error;
  return new PayError('INTERNAL_ERROR', 'An unexpected error occurred in paywidget-server; see the server log.', { cause: error });
}

/** Errors logged where they arose, with the ids known there (a payment id, an event id). */
const loggedAtSource = new WeakSet<object>();

/** Marks an error its source has logged, so the router does not log it a second time without those ids. */
export function loggedWhereItArose<E extends object>(error: E): E {
  loggedAtSource.add(error);
  return error;
}

/** Whether the error, or one it wraps (a hidden message over a refused login, say), was logged where it arose. */
export function wasLogged(error: unknown): boolean {
  for (let at = error, depth = 0; typeof at === 'object' && at !== null && depth < 10; at = (at as { cause?: unknown }).cause, depth++) {
    if (loggedAtSource.has(at)) return true;
  }
  return false;
}

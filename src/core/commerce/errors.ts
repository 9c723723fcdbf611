import { PayError, type PayErrorCode } from '../errors.js';
import { parseJsonBody, type UpstreamResponse } from '../http.js';
import { cutText } from '../well-formed.js';

const textDecoder = new TextDecoder();

/**
 * A Magento error body: `{"message": "Maximum SearchCriteria pageSize is %max", "parameters": {"max": 300}}`.
 * Parameters are positional (`%1`, an array) or named (`%fieldName`, an object); input errors add an
 * `errors` array of the same shape.
 */
export interface MagentoErrorBody {
  message: string;
  parameters?: unknown[] | Record<string, unknown>;
  errors?: Array<{ message: string; parameters?: unknown[] | Record<string, unknown> }>;
  [key: string]: unknown;
}

/** Longest platform text quoted in an error: no message a person reads is longer, and the body is the platform's (or a proxy's) word. */
export const MAX_PLATFORM_TEXT = 2_000;
const MAX_PARAMETERS = 100;
const MAX_PARAMETER_LENGTH = 200;

/**
 * A parameter as text: a value, or a list of values, cut short; anything nested is left out (as text it says
 * nothing, and it can be deep enough to overflow the stack).
 */
export function parameterText(value: unknown): string | undefined {
  const scalar = (v: unknown) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || v === null;
  if (scalar(value)) return cutText(String(value), MAX_PARAMETER_LENGTH);
  const values = Array.isArray(value) ? value.slice(0, MAX_PARAMETERS).filter(scalar) : [];
  return values.length > 0 ? cutText(values.map(String).join(', '), MAX_PARAMETER_LENGTH) : undefined;
}

/**
 * The message with its parameters put in: `%1` → parameters[0], `%name` → parameters.name. As Magento's
 * renderer (strtr over the placeholders of the keys present), so `%1st` is `%1` then `st`, a longer key
 * wins (`%12` over `%1`), and a replacement is not scanned again.
 */
export function formatMagentoMessage(message: string, parameters?: unknown): string {
  // Bounded before the work and after it: a long message with many parameters would hold the event loop for
  // seconds, and one placeholder repeated could multiply a parameter past what a string can hold.
  message = cutText(message, MAX_PLATFORM_TEXT);
  if (parameters === undefined || parameters === null || typeof parameters !== 'object') return message;
  const entries: Array<[string, unknown]> = Array.isArray(parameters)
    ? parameters.slice(0, MAX_PARAMETERS).map((value, i) => [`%${i + 1}`, value])
    : Object.entries(parameters).slice(0, MAX_PARAMETERS).map(([key, value]) => [`%${key}`, value]);
  const pairs = new Map<string, string>();
  for (const [key, value] of entries) {
    const text = parameterText(value);
    if (text !== undefined && key.length > 1) pairs.set(key, text);
  }
  if (pairs.size === 0) return message;
  const keys = [...pairs.keys()].sort((a, b) => b.length - a.length);
  let out = '';
  for (let i = 0; i < message.length && out.length <= MAX_PLATFORM_TEXT;) {
    const key = message[i] === '%' ? keys.find((k) => message.startsWith(k, i)) : undefined;
    if (key === undefined) {
      out += message[i];
      i += 1;
    } else {
      out += pairs.get(key);
      i += key.length;
    }
  }
  return cutText(out, MAX_PLATFORM_TEXT);
}

/** The Magento error body of a response, when it has one. */
export function readMagentoError(response: UpstreamResponse): MagentoErrorBody | undefined {
  try {
    const body: unknown = JSON.parse(textDecoder.decode(response.body));
    if (isMagentoError(body)) return body as MagentoErrorBody;
  } catch {
    // not JSON: no Magento body
  }
  return undefined;
}

function isMagentoError(value: unknown): value is { message: string; parameters?: unknown } {
  return typeof value === 'object' && value !== null && typeof (value as { message?: unknown }).message === 'string';
}

/** What Magento answers (404) for a path or method it has no route for: the URL is wrong, nothing is missing. */
const NO_ROUTE = 'Request does not match any route.';

export function isNoRoute(body: MagentoErrorBody | undefined): boolean {
  return body?.message === NO_ROUTE;
}

/** Everything a Magento body says, for people: the message and its input errors, parameters put in. */
export function describeMagentoError(body: MagentoErrorBody): string {
  const main = formatMagentoMessage(body.message, body.parameters);
  // Each input error as Magento shapes it; anything else in the list (a null, a string) is passed over.
  const details = Array.isArray(body.errors)
    ? body.errors.slice(0, MAX_PARAMETERS).flatMap((e: unknown) => (isMagentoError(e) ? [formatMagentoMessage(e.message, e.parameters)] : []))
    : [];
  return cutText(details.length ? `${main} (${details.join('; ')})` : main, MAX_PLATFORM_TEXT);
}

export interface CommerceErrorOptions {
  upstreamStatus?: number | undefined;
  body?: MagentoErrorBody | undefined;
  cause?: unknown;
  details?: Record<string, unknown> | undefined;
}

/**
 * The commerce platform refused a call. `message` is for people (parameters substituted);
 * `upstreamStatus` and `body` (the raw Magento body) are for code.
 */
export class CommerceError extends PayError {
  override readonly name = 'CommerceError';
  /** The platform's own HTTP status (401, 404, 5xx…); `status` is what the library's routes answer. */
  readonly upstreamStatus: number | undefined;
  readonly #body: MagentoErrorBody | undefined;

  constructor(code: PayErrorCode, message: string, options: CommerceErrorOptions = {}) {
    super(code, message, {
      cause: options.cause,
      details: { service: 'commerce', ...(options.upstreamStatus !== undefined ? { upstreamStatus: options.upstreamStatus } : {}), ...options.details },
    });
    this.upstreamStatus = options.upstreamStatus;
    this.#body = options.body;
  }

  /**
   * The platform's error body, parsed (`{ message, parameters }`), for code; never echoed to the browser. A getter,
   * not a field: pino's error serializer takes any field with a `message` for an error of its own, and logged it as
   * one with an empty stack and no parameters (the message above already says what the platform said).
   */
  get body(): MagentoErrorBody | undefined {
    return this.#body;
  }

  /** Set when the platform refused the page size: its `Maximum SearchCriteria pageSize is N`. */
  get maxPageSize(): number | undefined {
    const value = this.details?.maxPageSize;
    return typeof value === 'number' ? value : undefined;
  }
}

const PAGE_SIZE_CAP = /Maximum SearchCriteria pageSize is (\d+)/i;
/**
 * An older answer for a store code (the scope in /rest/{scope}/V1) the platform does not have. Magento 2.4
 * answers that with the 404 no-route (the code is read as part of the path), which the token request's
 * hint covers: it names COMMERCE_URL and COMMERCE_SCOPE.
 */
const UNKNOWN_STORE = /store that was requested wasn't found/i;

/** Older Magento's 404 for a store code in the URL that no store view has: COMMERCE_SCOPE is wrong, nothing is missing. */
export function isUnknownStore(body: MagentoErrorBody | undefined): boolean {
  return body !== undefined && UNKNOWN_STORE.test(body.message);
}

/** The cap in a "Maximum SearchCriteria pageSize is N" refusal, if that is what the body says. */
export function pageSizeCapOf(body: MagentoErrorBody | undefined): number | undefined {
  if (!body) return undefined;
  const match = PAGE_SIZE_CAP.exec(formatMagentoMessage(body.message, body.parameters));
  const cap = match ? Number(match[1]) : Number.NaN;
  return Number.isSafeInteger(cap) && cap > 0 ? cap : undefined;
}

/**
 * A non-2xx answer of a commerce call as a CommerceError (COMMERCE_ERROR), message substituted, raw body
 * kept. `noRouteHint` says what to check when the platform has no route for the call.
 */
export function commerceFailure(what: string, response: UpstreamResponse, noRouteHint = 'COMMERCE_URL (commerce.url) and commerce.readMethod'): CommerceError {
  const body = readMagentoError(response);
  const maxPageSize = pageSizeCapOf(body);
  const said = !body
    ? ` without a Magento error body (${response.headers.get('content-type') ?? 'no content-type'}); check COMMERCE_URL`
    : `: ${describeMagentoError(body).replace(/\.$/, '')}${whatToCheck(body, maxPageSize, noRouteHint)}`;
  return new CommerceError('COMMERCE_ERROR', `The commerce platform refused ${what} with HTTP ${response.status}${said}.`, {
    upstreamStatus: response.status,
    body,
    details: maxPageSize !== undefined ? { maxPageSize } : undefined,
  });
}

/** What to change, for the refusals a setting causes; empty for the others. */
function whatToCheck(body: MagentoErrorBody, maxPageSize: number | undefined, noRouteHint: string): string {
  if (isNoRoute(body)) return `; the platform has no such path for this method: check ${noRouteHint}`;
  if (isUnknownStore(body)) return '; no store view has the code in the URL: check COMMERCE_SCOPE (commerce.scope), or leave it unset for `default`';
  if (maxPageSize !== undefined) return `; ask for at most ${maxPageSize} orders a page (pageSize), or page with orders.iterate(), which keeps to the cap`;
  return '';
}

/** The JSON of a commerce answer, or UPSTREAM_INVALID_RESPONSE saying what came instead. */
export function commerceJson(response: UpstreamResponse, what: string): unknown {
  return parseJsonBody('commerce', response, what);
}

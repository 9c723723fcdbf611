import { PayError } from './errors.js';
import type { Framework, PayRequest } from './types.js';
import { getHeader } from './headers.js';
import { jsonSyntaxCause } from './json-syntax-cause.js';
import { utf8Length } from './utf8-length.js';

const textDecoder = new TextDecoder();

/**
 * The JSON body of a request to a JSON route: a parser's object, the raw bytes parsed, or `{}` when
 * empty; 413 past `limit`. The adapters read a stream up to its route's limit; a body a parser kept came under
 * the parser's own, so the route holds its limit here too. Of a parser's object only a declared length tells
 * the size (re-serialized, whitespace and escapes would be lost, and `1e20` would grow): a body that
 * came chunked or compressed was held to the parser's own limit alone.
 */
export function readJsonBody(request: PayRequest, limit: number): unknown {
  // Only JSON, declared so, whoever parsed it. A page of another site can send a form, text/plain or an untyped body
  // with the shopper's cookies without the browser asking first (a CORS preflight), and a cookie session in authorize
  // would let it through; a form parser in front would also make it an object in one framework and text in another.
  // Only a body that is there: an empty POST of any type (curl -X POST, curl -d '') has nothing to misread, as a GET has not.
  const type = hasBody(request) ? mediaType(getHeader(request.headers, 'content-type')) : JSON_TYPE;
  if (type !== JSON_TYPE && !type.endsWith('+json')) throw notJson(type);
  if (request.bodyUsed && request.rawBody === undefined && request.parsedBody === undefined) {
    const fix = readsNodeStreams(request.framework) ? STREAM_READ_FIX : HAND_OVER_UNREAD;
    throw new PayError('INVALID_INPUT', `The request body was read before paywidget-server got it, and cannot be read again. ${fix}`);
  }
  if (request.parsedBody !== undefined && request.rawBody === undefined) {
    if (isIdentityCoding(getHeader(request.headers, 'content-encoding')) && Number(getHeader(request.headers, 'content-length')) > limit) throw bodyTooLarge(limit);
    return request.parsedBody;
  }
  const raw = request.rawBody;
  if (raw !== undefined && (typeof raw === 'string' ? utf8Length(raw) : raw.byteLength) > limit) throw bodyTooLarge(limit);
  // Bytes are read as UTF-8 (ASCII is a part of it); a parser that ran first decoded its own charset (and
  // then its string or object is used). No bytes, nothing to misread: a GET that names a charset is fine.
  const charset = raw === undefined || typeof raw === 'string' || raw.byteLength === 0 ? undefined : declaredCharset(getHeader(request.headers, 'content-type'));
  if (charset !== undefined && !UTF8_READABLE.has(charset)) {
    throw new PayError('UNSUPPORTED_MEDIA_TYPE', `The request body is declared as charset ${JSON.stringify(charset.slice(0, 40))}; paywidget-server reads JSON as UTF-8 only. Send it as UTF-8 (Content-Type: application/json; charset=utf-8).`);
  }
  const text = raw === undefined ? '' : typeof raw === 'string' ? raw : textDecoder.decode(raw);
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new PayError('INVALID_JSON', 'The request body is not valid JSON. Send a JSON object with Content-Type: application/json.', { cause: jsonSyntaxCause(error) });
  }
}

/** Whether the request brought a body: bytes, or an object a parser made of some. */
function hasBody(request: PayRequest): boolean {
  if (request.method === 'GET' || request.method === 'HEAD') return false;
  const raw = request.rawBody;
  if (raw !== undefined) return (typeof raw === 'string' ? raw.length : raw.byteLength) > 0;
  const parsed = request.parsedBody;
  return parsed !== undefined && !(typeof parsed === 'object' && parsed !== null && Object.keys(parsed).length === 0);
}

const JSON_TYPE = 'application/json';
const FORM_TYPES: ReadonlySet<string> = new Set(['application/x-www-form-urlencoded', 'multipart/form-data']);

/** The media type a Content-Type names, lowercased, without its parameters ('' for none). */
function mediaType(contentType: string | undefined): string {
  return contentType === undefined ? '' : contentType.split(';', 1)[0]!.trim().toLowerCase();
}

/** 415 for a body not declared as JSON, saying how to send it. */
function notJson(type: string): PayError {
  const sent = FORM_TYPES.has(type) ? `a form (${type})` : type === '' ? 'sent without a Content-Type' : `declared as ${JSON.stringify(type.slice(0, 60))}`;
  return new PayError('UNSUPPORTED_MEDIA_TYPE', `The request body is ${sent}; paywidget-server's routes take JSON, declared as such (a body of another type is what a page of another site can send with the shopper's cookies without the browser asking first). Send it as JSON: fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(data) }).`);
}

/** Charsets whose bytes read the same as UTF-8. */
const UTF8_READABLE: ReadonlySet<string> = new Set(['utf-8', 'utf8', 'us-ascii', 'ascii']);

/** The charset parameter of a Content-Type, lowercased and unquoted; undefined when there is none. */
function declaredCharset(contentType: string | undefined): string | undefined {
  if (contentType === undefined) return undefined;
  for (const parameter of contentType.split(';').slice(1)) {
    const eq = parameter.indexOf('=');
    if (eq !== -1 && parameter.slice(0, eq).trim().toLowerCase() === 'charset') return parameter.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1').toLowerCase();
  }
  return undefined;
}

/**
 * The coding of a body the adapter reads from the stream, for it to decompress: undefined for none (identity), one of
 * `supported` (`x-gzip` read as `gzip`), else 415: an unknown coding, or several stacked. As body parsers do, since a
 * webhook's signature covers the body the sender encoded, and a 4xx may make a sender drop the event.
 */
export function requestCoding(contentEncoding: string | null | undefined, supported: ReadonlySet<string>): string | undefined {
  if (isIdentityCoding(contentEncoding)) return undefined;
  const codings = contentEncoding!.split(',').map((coding) => coding.trim().toLowerCase()).filter((coding) => coding !== '' && coding !== 'identity');
  const coding = codings.length === 1 ? (codings[0] === 'x-gzip' ? 'gzip' : codings[0]) : undefined;
  if (coding !== undefined && supported.has(coding)) return coding;
  const sent = JSON.stringify(contentEncoding!.trim().toLowerCase().slice(0, 40));
  throw new PayError('UNSUPPORTED_MEDIA_TYPE', `The request body is encoded as ${sent} (Content-Encoding), which paywidget-server does not decompress here: it takes ${[...supported].join(', ')}, one at a time. Send the body uncompressed, or with one of those.`);
}

/** 400: a body sent compressed that does not decompress. */
export function bodyNotDecompressed(coding: string, cause: unknown): PayError {
  return new PayError('INVALID_INPUT', `The request body could not be decompressed (Content-Encoding: ${coding}): it is not the ${coding} data it says it is.`, { cause });
}

/** A Content-Encoding that leaves the bytes as sent: none, empty, or `identity` (a repeated header is a list: `identity, identity`). */
function isIdentityCoding(contentEncoding: string | null | undefined): boolean {
  return !contentEncoding || contentEncoding.split(',').every((coding) => {
    const name = coding.trim().toLowerCase();
    return name === '' || name === 'identity';
  });
}

/** The fix for a Fetch Request whose body was read before the library got it (App Router). */
export const HAND_OVER_UNREAD = 'Hand the Request over unread (read a request.clone() if you need the body too).';

/** Whether the framework's adapter reads a Node stream (the Node bridge), rather than a Fetch Request. */
export function readsNodeStreams(framework: Framework | undefined): boolean {
  return framework === 'express' || framework === 'koa' || framework === 'next-pages';
}

/**
 * The fix when a Node stream was read before the library got it, and nothing kept its bytes: not a parser of the
 * framework's (the webhook errors name those) but the app's code. A Fetch Request's is HAND_OVER_UNREAD.
 */
export const STREAM_READ_FIX = 'The request stream was read before paywidget-server got it (by the app\'s own code or a middleware: a body logger, getRawBody(req), micro\'s buffer(req)), and its bytes were not kept. Leave the stream unread for paywidget-server, or keep the bytes as req.rawBody (a Buffer).';

/** The option a body read past its route's limit must raise: the message names both, for either route. */
export const READ_LIMIT_OPTIONS = 'maxBodyBytes (or webhooks.maxBodyBytes, for webhooks)';

/** 400: the client went away mid-body, or sent fewer bytes than it announced, or something else holds the stream. */
export function bodyUnreadable(why: string, cause: unknown): PayError {
  return new PayError('INVALID_INPUT', `The request body could not be read (${why}).`, { cause });
}

/** 413, naming the option that sets `limit`. */
export function bodyTooLarge(limit: number, option = 'maxBodyBytes', cause?: unknown): PayError {
  return new PayError('BODY_TOO_LARGE', `The request body is larger than the ${limit}-byte limit. Raise ${option} if your payloads really are this large.`, { cause });
}

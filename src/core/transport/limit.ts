import { isBodiless } from '../json-response.js';

/**
 * The most bytes an upstream answer may hold, after decompression. A search page of 1,000 orders is
 * about 6 MB; an answer past this is a faulty proxy or a compression bomb, and reading it would take
 * the merchant's server memory (and a refusal's body would be passed on to the browser).
 */
export const MAX_RESPONSE_BYTES = 64 * 2 ** 20;

/** An answer longer than MAX_RESPONSE_BYTES: not read further, and not retried. */
export class ResponseTooLargeError extends Error {
  constructor() {
    super(`the answer is longer than ${MAX_RESPONSE_BYTES / 2 ** 20} MiB, the most an upstream answer may hold`);
    this.name = 'ResponseTooLargeError';
  }
}

/** A declared Content-Length already past the limit. */
export function declaredTooLarge(contentLength: string | null | undefined): boolean {
  return contentLength != null && Number(contentLength) > MAX_RESPONSE_BYTES;
}

/** Whether an answer carries a body: never to HEAD, never with 204 or 304 (RFC 9110), whatever its headers say. */
export function hasBody(method: string, status: number): boolean {
  return method !== 'HEAD' && !isBodiless(status);
}

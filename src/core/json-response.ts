import type { PayResponse } from './types.js';

/** Tokens and payment states must never be served again from a cache. */
export const NO_STORE = 'no-store';

/** A route's JSON answer. */
export function jsonResponse(status: number, body: unknown): PayResponse {
  return { status, headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': NO_STORE }, body: JSON.stringify(body) };
}

import type { PayResponse } from './types.js';

/** Tokens and payment states must never be served again from a cache. */
export const NO_STORE = 'no-store';

/** A route's JSON answer. */
export function jsonResponse(status: number, body: unknown): PayResponse {
  return jsonTextResponse(status, JSON.stringify(body));
}

/** A JSON answer already serialized (a constant on a hot route need not be stringified per request). */
export function jsonTextResponse(status: number, json: string): PayResponse {
  return { status, headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': NO_STORE }, body: json };
}

/** A 204 or 304 carries no body and claims no length, whatever else is set (RFC 9110). */
export function isBodiless(status: number): boolean {
  return status === 204 || status === 304;
}

import type { Secret } from '../secret.js';
import { CommerceError } from './errors.js';

/**
 * How long a refused login (wrong credentials, 2FA) is remembered: calls meanwhile fail at once.
 * Magento locks the admin account after a few refused logins in a row (6 by default, for 30
 * minutes), and after a password rotation every order call would otherwise log in again.
 */
export const LOGIN_REFUSAL_COOLDOWN_MS = 60_000;
const REMEMBERED_CODES: ReadonlySet<string> = new Set(['COMMERCE_AUTH_FAILED', 'COMMERCE_TWO_FACTOR_REQUIRED']);

/** A login refused by the platform, and the token whose rejection led to it (never used again). */
export interface Refusal {
  error: CommerceError;
  at: number;
  dead: Secret | undefined;
}

/** A refusal worth remembering: the platform said no to these credentials, not that it was down. */
export function isRememberedRefusal(error: unknown): error is CommerceError {
  return error instanceof CommerceError && REMEMBERED_CODES.has(error.code);
}

/** Within the cooldown of a refused login: its error again, saying so, without asking the platform. */
export function failIfRefused(refusal: Refusal | undefined, now: number): void {
  if (!refusal) return;
  const { error, at } = refusal;
  const until = at + LOGIN_REFUSAL_COOLDOWN_MS;
  if (now >= until) return;
  const iso = (ms: number) => new Date(ms).toISOString();
  throw new CommerceError(error.code, `${error.message} (Remembered from the login refused at ${iso(at)}: no new login is tried before ${iso(until)}, since each refused login counts towards Magento's lockout.)`, {
    upstreamStatus: error.upstreamStatus, body: error.body, cause: error,
  });
}

/**
 * The refusal as the shared token store keeps it, so that the other instances do not each try their
 * own login (and each earn one more failure towards the lockout). No credential: code, message, status, time.
 */
export function encodeRefusal(error: CommerceError, at: number): string {
  return JSON.stringify({ code: error.code, message: error.message, status: error.upstreamStatus, at });
}

/** A refusal another instance shared; undefined for anything else (the store answers what it holds). */
export function decodeRefusal(text: string | undefined): { error: CommerceError; at: number } | undefined {
  if (text === undefined) return undefined;
  let value: { code?: unknown; message?: unknown; status?: unknown; at?: unknown };
  try {
    value = JSON.parse(text) as typeof value;
  } catch {
    return undefined;
  }
  const { code, message, status, at } = value ?? {};
  if (typeof code !== 'string' || !REMEMBERED_CODES.has(code) || typeof message !== 'string' || typeof at !== 'number') return undefined;
  const error = new CommerceError(code as CommerceError['code'], message, typeof status === 'number' ? { upstreamStatus: status } : {});
  return { error, at };
}

import type { Secret } from '../secret.js';
import { CommerceError } from './errors.js';

/** What the admin-token client appends to its token key for the remembered refusal (the CLI's file store reads it too). */
export const REFUSAL_KEY_SUFFIX = '|login-refused';

/**
 * How long a refused login (wrong credentials, 2FA) is remembered, by how many were refused in a row:
 * calls meanwhile fail at once. After a password rotation every order call would otherwise log in
 * again, and Magento locks the account at the 6th refusal that comes within 30 minutes of the one
 * before. So 1, 2 and 4 minutes, then 31: four refusals at most in one such chain, whatever runs.
 */
const COOLDOWNS_MS = [60_000, 2 * 60_000, 4 * 60_000, 31 * 60_000];

export function loginRefusalCooldownMs(refusalsInARow: number): number {
  return COOLDOWNS_MS[Math.min(Math.max(refusalsInARow, 1), COOLDOWNS_MS.length) - 1]!;
}

/** How long the store keeps a shared refusal: its cooldown, then long enough to count the next one as "in a row". */
export function sharedRefusalTtlMs(refusalsInARow: number): number {
  return loginRefusalCooldownMs(refusalsInARow) + COOLDOWNS_MS[COOLDOWNS_MS.length - 1]!;
}
const REMEMBERED_CODES: ReadonlySet<string> = new Set(['COMMERCE_AUTH_FAILED', 'COMMERCE_TWO_FACTOR_REQUIRED']);

/** A login refused by the platform, and the token whose rejection led to it (never used again). */
export interface Refusal {
  error: CommerceError;
  at: number;
  /** Refusals in a row up to this one (no login succeeded between them). */
  count: number;
  dead: Secret | undefined;
}

/** A refusal worth remembering: the platform said no to these credentials, not that it was down. */
export function isRememberedRefusal(error: unknown): error is CommerceError {
  return error instanceof CommerceError && REMEMBERED_CODES.has(error.code);
}

/** Within the cooldown of a refused login: its error again, saying so, without asking the platform. */
export function failIfRefused(refusal: Refusal | undefined, now: number): void {
  if (!refusal) return;
  const { error, at, count } = refusal;
  const until = at + loginRefusalCooldownMs(count);
  if (now >= until) return;
  const iso = (ms: number) => new Date(ms).toISOString();
  throw new CommerceError(error.code, `${error.message} (Remembered from the login refused at ${iso(at)}: no new login is tried before ${iso(until)}, since each refused login counts towards Magento's lockout. Corrected the credentials since? Clear the remembered refusal to log in at once: in Redis, delete the key ending in '${REFUSAL_KEY_SUFFIX}' under the stores' prefix; for the CLI without Redis, login-refusals.json in PAYWIDGET_STATE_DIR (by default ~/.local/state/paywidget).)`, {
    upstreamStatus: error.upstreamStatus, body: error.body, cause: error,
  });
}

/**
 * The refusal as the shared token store keeps it, so that the other instances do not each try their
 * own login (and each earn one more failure towards the lockout). No credential: code, message, status, time.
 */
export function encodeRefusal(error: CommerceError, at: number, count: number): string {
  return JSON.stringify({ code: error.code, message: error.message, status: error.upstreamStatus, at, count });
}

/** What a successful login leaves in the store's refusal slot: no refusal (it expires at once). */
export const NO_REFUSAL = 'none';

/** A refusal another instance shared; undefined for anything else (the store answers what it holds). */
export function decodeRefusal(text: string | undefined): Omit<Refusal, 'dead'> | undefined {
  if (text === undefined) return undefined;
  let value: { code?: unknown; message?: unknown; status?: unknown; at?: unknown; count?: unknown };
  try {
    value = JSON.parse(text) as typeof value;
  } catch {
    return undefined;
  }
  const { code, message, status, at, count } = value ?? {};
  if (typeof code !== 'string' || !REMEMBERED_CODES.has(code) || typeof message !== 'string' || typeof at !== 'number') return undefined;
  const error = new CommerceError(code as CommerceError['code'], message, typeof status === 'number' ? { upstreamStatus: status } : {});
  return { error, at, count: typeof count === 'number' && Number.isSafeInteger(count) && count > 0 ? count : 1 };
}

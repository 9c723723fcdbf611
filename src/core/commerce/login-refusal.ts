import { PayError } from '../errors.js';
import type { AdminTokenStore } from '../stores/admin-token-store.js';
import type { Logger } from '../types.js';
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
/** Refused credentials, and (UPSTREAM_TIMEOUT) a login whose answer did not come: Magento may have counted a refusal. */
const REMEMBERED_CODES: ReadonlySet<string> = new Set(['COMMERCE_AUTH_FAILED', 'COMMERCE_TWO_FACTOR_REQUIRED', 'UPSTREAM_TIMEOUT']);

/** A login refused by the platform (or whose outcome is unknown). */
export interface Refusal {
  error: CommerceError;
  at: number;
  /** Refusals in a row up to this one (no login succeeded between them). */
  count: number;
  /** In the shared store (written there, or read from it): cleared there, it no longer holds here either. */
  shared: boolean;
}

/**
 * What to remember of a login that failed, or undefined: the platform said no to these credentials, or the login
 * went out and no answer came in time (a time-out, a gateway's 504), which Magento may have counted as a refusal
 * all the same. Not a platform that was down or unreachable before the login reached it.
 */
export function rememberedRefusal(error: unknown, url: string): CommerceError | undefined {
  if (error instanceof CommerceError && REMEMBERED_CODES.has(error.code)) return error;
  const unanswered = (error instanceof PayError && error.code === 'UPSTREAM_TIMEOUT') || (error instanceof CommerceError && error.upstreamStatus === 504);
  if (!unanswered) return undefined;
  return new CommerceError('UPSTREAM_TIMEOUT', `The admin login to ${url} got no answer in time, so whether the platform refused it is unknown (a refused one counts towards Magento's lockout).`, { cause: error });
}

/** Within the cooldown of a refused login: its error again, saying so, without asking the platform. */
export function failIfRefused(refusal: Refusal | undefined, now: number): void {
  if (!refusal) return;
  const { error, at, count } = refusal;
  const until = at + loginRefusalCooldownMs(count);
  if (now >= until) return;
  const iso = (ms: number) => new Date(ms).toISOString();
  const login = error.code === 'UPSTREAM_TIMEOUT' ? 'the login left unanswered' : 'the login refused';
  throw new CommerceError(error.code, `${error.message} (Remembered from ${login} at ${iso(at)}: no new login is tried before ${iso(until)}, since each refused login counts towards Magento's lockout. Corrected the credentials since? Clear the remembered refusal to log in at once: in Redis, delete the key ending in '${REFUSAL_KEY_SUFFIX}' under the stores' prefix; for the CLI without Redis, login-refusals.json in PAYWIDGET_STATE_DIR (by default $XDG_STATE_HOME/paywidget, or ~/.local/state/paywidget).)`, {
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
export function decodeRefusal(text: string | undefined): Omit<Refusal, 'shared'> | undefined {
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

/**
 * The refused logins of one platform user, as this instance knows them and as the shared store holds them, so
 * that the instances sharing it do not each try their own login (and each earn one more failure towards the lockout).
 */
export class RememberedRefusals {
  #refusal: Refusal | undefined;

  constructor(
    private readonly store: AdminTokenStore,
    private readonly key: string,
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {}

  /**
   * Within the cooldown of the latest refused login, this instance's or one another instance shared through the
   * store (adopted, so that it is not tried again here): its error, without logging in.
   */
  async failIfRefused(): Promise<void> {
    let shared: Omit<Refusal, 'shared'> | undefined;
    let answered = false;
    try {
      shared = decodeRefusal(await this.store.get(this.key));
      answered = true;
    } catch {
      // An unreachable store was reported where the token was read: the login goes ahead as without a store.
    }
    if (shared && shared.at > (this.#refusal?.at ?? -Infinity)) this.#refusal = { ...shared, shared: true };
    // Cleared in the store (by hand once the credentials are fixed, as the error says, or by a login that worked
    // elsewhere): this instance's copy goes too. One the store never took is kept.
    else if (answered && shared === undefined && this.#refusal?.shared) this.#refusal = undefined;
    failIfRefused(this.#refusal, this.now());
  }

  /** A refused login (or one left unanswered), for this instance and, through the store, the others. */
  async remember(error: CommerceError): Promise<void> {
    const at = this.now();
    const count = (this.#refusal?.count ?? 0) + 1;
    const refusal: Refusal = { error, at, count, shared: false };
    this.#refusal = refusal;
    try {
      await this.store.set(this.key, encodeRefusal(error, at, count), sharedRefusalTtlMs(count));
      refusal.shared = true;
    } catch (storeError) {
      this.logger.warn({ err: storeError, service: 'commerce' }, 'admin token store failed to keep the refused login; other instances may try their own');
    }
  }

  /** A login worked: the refusals in a row end here, for the other instances too. */
  async forget(): Promise<void> {
    if (this.#refusal === undefined) return;
    this.#refusal = undefined;
    await this.store.set(this.key, NO_REFUSAL, 1).catch(() => {});
  }
}

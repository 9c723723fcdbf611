import { randomBytes } from 'node:crypto';
import { safeEqual } from '../shared/http.js';
import { MagentoError, MESSAGES, SALES_RESOURCE } from './magento.js';

export interface AdminAuthOptions {
  username: string;
  password: string;
  now: () => number;
  tokenLifetimeMs: number;
  lockoutFailures: number;
  lockoutMs: number;
  twoFactor: boolean;
}

/**
 * Magento's admin login: `POST /V1/integration/admin/token` answers the token as a JSON string; a
 * wrong password, an unknown user and a locked account all get the same 401; after
 * `lockoutFailures` failures in a row the account is locked for `lockoutMs`, right password or not.
 * As in Magento's RequestThrottler, failures count per user name (another name's failures lock no one
 * else) and "in a row" while each comes within `lockoutMs` of the one before: a quieter pause starts the
 * count over.
 */
export class AdminAuth {
  private readonly tokens = new Map<string, number>();
  /** Per user name as sent: failures in a row, the last one's time, and until when the name is locked. */
  private readonly throttle = new Map<string, { failures: number; lastFailureAt: number; lockedUntil: number }>();
  twoFactor: boolean;
  /** Token requests received, issued tokens, and order calls refused for want of a valid token. */
  readonly counts = { tokenRequests: 0, tokensIssued: 0, unauthorized: 0 };

  constructor(private readonly options: AdminAuthOptions) {
    this.twoFactor = options.twoFactor;
  }

  login(body: Record<string, unknown>): string {
    this.counts.tokenRequests += 1;
    const missing = ['username', 'password'].filter((f) => typeof body[f] !== 'string' || body[f] === '');
    if (missing.length) {
      throw new MagentoError(400, MESSAGES.inputErrors, undefined, missing.map((fieldName) => ({ message: MESSAGES.required, parameters: { fieldName } })));
    }
    const { now, username, password, lockoutFailures, lockoutMs, tokenLifetimeMs } = this.options;
    const name = body.username as string;
    const state = this.throttle.get(name) ?? { failures: 0, lastFailureAt: -Infinity, lockedUntil: 0 };
    const locked = now() < state.lockedUntil;
    const right = safeEqual(name, username) && safeEqual(body.password as string, password);
    if (locked || !right) {
      if (now() - state.lastFailureAt >= lockoutMs) state.failures = 0;
      state.lastFailureAt = now();
      if (!locked && ++state.failures >= lockoutFailures) {
        state.lockedUntil = now() + lockoutMs;
        state.failures = 0;
      }
      this.throttle.set(name, state);
      throw new MagentoError(401, MESSAGES.signInIncorrect);
    }
    this.throttle.delete(name);
    if (this.twoFactor) throw new MagentoError(401, MESSAGES.twoFactor, { active_providers: ['google'] });
    const token = randomBytes(16).toString('hex');
    this.tokens.set(token, now() + tokenLifetimeMs);
    this.counts.tokensIssued += 1;
    return token;
  }

  /** Throws Magento's 401 unless `token` was issued and has not expired. */
  check(token: string | undefined): void {
    const expiresAt = token === undefined ? undefined : this.tokens.get(token);
    if (expiresAt === undefined || this.options.now() >= expiresAt) {
      this.counts.unauthorized += 1;
      throw new MagentoError(401, MESSAGES.unauthorized, SALES_RESOURCE);
    }
  }

  /** A rotated password: logins with the old one are refused from now on (issued tokens stay valid). */
  setPassword(password: string): void {
    this.options.password = password;
  }

  expireAll(): void {
    for (const token of this.tokens.keys()) this.tokens.set(token, 0);
  }

  issued(): string[] {
    return [...this.tokens.keys()];
  }

  /** Whether the admin user is locked out. */
  get locked(): boolean {
    return this.options.now() < (this.throttle.get(this.options.username)?.lockedUntil ?? 0);
  }
}

import { randomBytes } from 'node:crypto';
import { ApiError } from '../shared/http.js';

export const TOKEN_TTL_MS = 15 * 60 * 1000;

export interface WidgetTokenRecord {
  readonly token: string;
  readonly amount: number;
  readonly currency: string;
  readonly orderId: string;
  readonly expiresAt: number;
  spentAt?: number;
  /** Set by a lookup whose `customer_email` matches a shopper with saved cards. */
  shopperEmail?: string | undefined;
}

/** Single-use widget tokens, valid 15 minutes by the injected clock. */
export class TokenStore {
  private readonly tokens = new Map<string, WidgetTokenRecord>();

  constructor(private readonly now: () => number) {}

  mint(order: { amount: number; currency: string; orderId: string }): WidgetTokenRecord {
    const record: WidgetTokenRecord = { token: `wt_${randomBytes(16).toString('hex')}`, ...order, expiresAt: this.now() + TOKEN_TTL_MS };
    this.tokens.set(record.token, record);
    return record;
  }

  /** The record of a usable token: 401 unknown, 409 spent, 410 expired. */
  require(token: string | undefined): WidgetTokenRecord {
    if (token === undefined || token === '') {
      throw new ApiError(401, 'invalid_token', 'A widget token is required (body widget_token or Authorization: Bearer).');
    }
    const record = this.tokens.get(token);
    if (!record) throw new ApiError(401, 'invalid_token', 'The widget token is not known.');
    if (record.spentAt !== undefined) throw new ApiError(409, 'token_spent', 'The widget token has already been used.');
    if (this.now() >= record.expiresAt) throw new ApiError(410, 'token_expired', 'The widget token has expired.');
    return record;
  }

  spend(record: WidgetTokenRecord): void {
    record.spentAt = this.now();
  }
}

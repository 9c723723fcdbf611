/** Public types of the commerce-platform sandbox. */
import type { FaultInjector } from '../payment/types.js';

/** An order as the sandbox serves it (the shape of test/fixtures/commerce). */
export type SandboxOrder = Record<string, unknown> & { entity_id: number };

/** Options of the commerce platform in `startSandbox({ commerce })`; every one has a default. */
export interface CommerceSandboxOptions {
  /** Port of the commerce platform; default 0 (ephemeral). Always 127.0.0.1. */
  port?: number | undefined;
  /** Generated orders, entity_id 1…n (default 50; several hundred thousand are fine: built on demand). */
  orders?: number | undefined;
  /** Seed of the generator (default 1): the same seed gives the same orders. */
  seed?: number | undefined;
  /** created_at of the first order, `YYYY-MM-DD HH:MM:SS` UTC (default `2025-01-01 00:00:00`). */
  startDate?: string | undefined;
  /** The orders' created_at spread over this many days, ascending with entity_id (default 365). */
  spreadDays?: number | undefined;
  /** Admin username (default `sandbox_admin`). */
  username?: string | undefined;
  /** Admin password (default random). */
  password?: string | undefined;
  /** Admin token lifetime by the sandbox clock (default 4 hours). */
  tokenLifetimeMs?: number | undefined;
  /** Failed logins in a row (each within lockoutMs of the last) that lock the account (default 6), and for how long (default 30 minutes). */
  lockoutFailures?: number | undefined;
  /** How long a locked account stays locked, and the window in which failures count (default 30 minutes). */
  lockoutMs?: number | undefined;
  /** Refuse username/password logins with Magento's 2FA message (default false). */
  twoFactor?: boolean | undefined;
  /** Old Magento (< 2.4): a page past the end answers the last page again (default false: no items). */
  lastPageAgain?: boolean | undefined;
  /** Refuse a larger `searchCriteria[pageSize]` with 400 "Maximum SearchCriteria pageSize is N" (default: no cap). */
  maxPageSize?: number | undefined;
  /**
   * Answer at most this many orders a page, whatever `pageSize` asks, echoing the `pageSize` asked and the
   * full `total_count`: a cap some installations and gateways apply without a word (default: none).
   */
  silentPageSizeCap?: number | undefined;
}

/** What the commerce platform has served since start, for assertions (a token shared, a page not read twice). */
export interface SandboxCommerceStats {
  /** Admin token requests, refused ones included. */
  tokenRequests: number;
  /** Admin tokens issued. */
  tokensIssued: number;
  /** Order calls refused with 401 (missing, unknown or expired token). */
  unauthorized: number;
  /** `GET` (or `POST`) reads of one order. */
  orderReads: number;
  /** Order searches (pages). */
  searches: number;
  /** The most requests the platform was answering at once. */
  maxConcurrentRequests: number;
}

/** `sb.commerce`: the orders, the admin login and the quirks of the commerce platform. */
export interface SandboxCommerce {
  /** Fault rules for the commerce routes (`/rest/…`), as `sb.faults` for the payment service. */
  readonly faults: FaultInjector;
  /** Orders so far (generated and added); entity_ids are 1…orderCount. */
  readonly orderCount: number;
  /** One order as the API would serve it. */
  order(entityId: number): SandboxOrder | undefined;
  /**
   * Adds an order (next entity_id, created now by the sandbox clock) built like a generated one, then `partial` on top.
   * `committed: false` models a checkout whose transaction has not committed yet: Magento handed out its
   * entity_id at insert, but no read or search sees it until `commitOrder(entityId)`.
   */
  addOrder(partial?: Record<string, unknown>, options?: { committed?: boolean }): SandboxOrder;
  /** Makes an order added with `committed: false` visible. */
  commitOrder(entityId: number): void;
  /** Changes fields of an order (shallow merge), and its `updated_at` to now unless given; throws on an unknown id. */
  setOrder(entityId: number, patch: Record<string, unknown>): SandboxOrder;
  /** Every admin token issued so far stops working (as if its lifetime had passed). */
  expireTokens(): void;
  /** Rotates the admin password (logins with the old one get Magento's 401); issued tokens stay valid. */
  setPassword(password: string): void;
  /** The admin tokens issued so far (to check that none leaks). */
  issuedTokens(): string[];
  /** Refuses password logins with Magento's 2FA message from now on (or stops). */
  setTwoFactor(enabled: boolean): void;
  /** Old Magento: a page past the end answers the last page again (or stops). */
  setLastPageAgain(enabled: boolean): void;
  /** Refuses a larger page size with Magento's 400 (undefined: no cap). */
  setMaxPageSize(max: number | undefined): void;
  /** Answers at most this many orders a page without saying so (undefined: no cap). */
  setSilentPageSizeCap(max: number | undefined): void;
  /** Counters since start (or the last resetStats). */
  stats(): SandboxCommerceStats;
  /** Sets every counter back to 0. */
  resetStats(): void;
}

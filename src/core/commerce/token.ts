import type { CommerceConfig, HttpPolicy } from '../config.js';
import { PayError } from '../errors.js';
import { callUpstream } from '../http.js';
import { Secret } from '../secret.js';
import type { AdminTokenStore } from '../stores/admin-token-store.js';
import type { Logger } from '../types.js';
import { CommerceError, commerceFailure, commerceJson, describeMagentoError, readMagentoError, type MagentoErrorBody } from './errors.js';

export interface AdminTokenDeps {
  config: CommerceConfig;
  http: HttpPolicy;
  logger: Logger;
  store: AdminTokenStore;
  /** Clock in milliseconds, for this instance's own copy of the token; `Date.now` by default. */
  now?: () => number;
}

/** How often an instance waiting for another instance's refresh looks for the new token. */
const SHARED_REFRESH_POLL_MS = 50;

/** Tokens are cached this much shorter than their lifetime: 5 minutes, or a tenth of a short lifetime. */
export function tokenTtlMs(lifetimeMs: number): number {
  return lifetimeMs - Math.min(5 * 60_000, Math.floor(lifetimeMs / 10));
}

const TWO_FACTOR = /2fa|two[- ]factor/i;

/**
 * The admin token: cached in the store for its lifetime less a margin, fetched by one request
 * however many calls wait for it, and never retried after a refusal (Magento locks the account
 * after repeated failed logins).
 *
 * With a shared store that offers a refresh lock (Redis), one instance logs in at a time and the
 * others poll the store for its token. When the store is unreachable, the instance keeps using its
 * own copy of the token, or logs in without the store: order reads never depend on it.
 */
export class AdminTokens {
  readonly #deps: AdminTokenDeps;
  readonly #key: string;
  #inflight: Promise<string> | undefined;
  /** This instance's copy of the last token it obtained, used only while the store is unreachable. */
  #local: { token: Secret; expiresAt: number } | undefined;
  #storeDown = false;

  constructor(deps: AdminTokenDeps) {
    this.#deps = deps;
    const { url, scope, username } = deps.config;
    this.#key = `paywidget:commerce-admin-token:${url}|${scope}|${username}`;
  }

  /** A cached token, or a fresh one. */
  async get(): Promise<string> {
    return (await this.#read()) ?? this.refresh(undefined);
  }

  /**
   * A new token because `rejected` was refused (or none was cached). One request at a time: calls
   * that arrive meanwhile share it, and a token another caller already replaced is not fetched again.
   */
  refresh(rejected: string | undefined): Promise<string> {
    this.#inflight ??= this.#refresh(rejected).finally(() => {
      this.#inflight = undefined;
    });
    return this.#inflight;
  }

  async #refresh(rejected: string | undefined): Promise<string> {
    const usable = (token: string | undefined) => (token !== undefined && token !== rejected ? token : undefined);
    const current = usable(await this.#read());
    if (current !== undefined) return current;
    const { store, logger, http } = this.#deps;
    if (!store.acquireRefreshLock) return this.#fetchAndCache();

    // A shared store: the instance that takes the lock logs in, the others wait for its token.
    // The lock outlives the longest token request; a holder that died frees it by expiry.
    const lockTtlMs = http.totalTimeoutMs + 5_000;
    const deadline = performance.now() + lockTtlMs + 1_000;
    for (;;) {
      let lock: string | undefined;
      try {
        lock = await store.acquireRefreshLock(this.#key, lockTtlMs);
      } catch (error) {
        logger.warn({ err: error, service: 'commerce' }, 'admin token store unreachable: refreshing the token without the shared lock');
        return this.#fetchAndCache();
      }
      if (lock !== undefined) {
        try {
          // Another instance may have finished its refresh between our read and our lock.
          return usable(await this.#read()) ?? (await this.#fetchAndCache());
        } finally {
          await store.releaseRefreshLock?.(this.#key, lock).catch((error: unknown) => {
            logger.warn({ err: error, service: 'commerce' }, 'admin token store failed to free the refresh lock; it expires by itself');
          });
        }
      }
      await new Promise((resolve) => setTimeout(resolve, SHARED_REFRESH_POLL_MS));
      const shared = usable(await this.#read());
      if (shared !== undefined) return shared;
      if (performance.now() > deadline) {
        logger.warn({ service: 'commerce' }, 'admin token refresh lock held too long by another instance: refreshing here');
        return this.#fetchAndCache();
      }
    }
  }

  /** The store's token; this instance's own copy when the store is unreachable. */
  async #read(): Promise<string | undefined> {
    const { store, logger } = this.#deps;
    try {
      const token = await store.get(this.#key);
      this.#storeDown = false;
      return token;
    } catch (error) {
      if (!this.#storeDown) logger.warn({ err: error, service: 'commerce' }, "admin token store unreachable: using this instance's own token until it is back");
      this.#storeDown = true;
      const local = this.#local;
      return local && this.#now() < local.expiresAt ? local.token.reveal() : undefined;
    }
  }

  async #fetchAndCache(): Promise<string> {
    const token = await this.#fetch();
    const ttlMs = tokenTtlMs(this.#deps.config.tokenLifetimeMs);
    this.#local = { token: new Secret(token), expiresAt: this.#now() + ttlMs };
    try {
      await this.#deps.store.set(this.#key, token, ttlMs);
    } catch (error) {
      this.#deps.logger.warn({ err: error, service: 'commerce' }, 'admin token store failed to keep the new token; this instance uses its own copy');
    }
    return token;
  }

  #now(): number {
    return (this.#deps.now ?? Date.now)();
  }

  async #fetch(): Promise<string> {
    const { config, http, logger } = this.#deps;
    const path = `/rest/${encodeURIComponent(config.scope)}/V1/integration/admin/token`;
    const response = await callUpstream({
      service: 'commerce',
      method: 'POST',
      url: `${config.url}${path}`,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ username: config.username, password: config.password.reveal() }),
      // Never retried: a refused login counts towards Magento's lockout.
      policy: { maxRetries: 0 },
    }, http, logger);

    if (!response.ok) {
      const body = readMagentoError(response);
      logger.warn({ service: 'commerce', status: response.status, route: `POST ${path}` }, 'commerce platform refused the admin token request');
      if (body && TWO_FACTOR.test(body.message)) throw twoFactorError(response.status, body);
      if (response.status === 401) {
        const said = body ? describeMagentoError(body) : `HTTP 401`;
        throw new CommerceError('COMMERCE_AUTH_FAILED', `The commerce platform refused the admin login of '${config.username}': ${said} Not retried, since Magento locks an account after repeated failures: check COMMERCE_USERNAME and COMMERCE_PASSWORD, or wait until a locked account is released.`, { upstreamStatus: 401, body });
      }
      throw commerceFailure('the admin token request', response);
    }

    const token = commerceJson(response, 'the admin token request');
    if (typeof token !== 'string' || token.trim() === '') {
      throw new PayError('UPSTREAM_INVALID_RESPONSE', 'The commerce platform answered the admin token request without a token (expected a JSON string).', { details: { service: 'commerce' } });
    }
    logger.info({ service: 'commerce', scope: config.scope }, 'commerce admin token obtained');
    return token;
  }
}

function twoFactorError(status: number, body: MagentoErrorBody): CommerceError {
  const params = body.parameters as { active_providers?: unknown } | undefined;
  const providers = Array.isArray(params?.active_providers) ? params.active_providers.map(String) : [];
  const endpoints = (providers.length ? providers : ['{provider}']).map((p) => `POST /rest/V1/tfa/provider/${p}/authenticate`).join(', ');
  return new CommerceError('COMMERCE_TWO_FACTOR_REQUIRED', `The commerce platform requires two-factor authentication for admin logins ("${body.message}"${providers.length ? `; providers: ${providers.join(', ')}` : ''}). Its token is only issued by the 2FA provider endpoints (${endpoints}) with a one-time code, which an unattended server cannot supply: use an admin account exempt from 2FA for the API, or disable Magento_TwoFactorAuth for API logins.`, { upstreamStatus: status, body });
}

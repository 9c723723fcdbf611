import { listenForAbort } from '../abort-listeners.js';
import type { CommerceConfig, HttpPolicy } from '../config.js';
import { loggedWhereItArose, PayError } from '../errors.js';
import { callUpstream, type UpstreamResponse } from '../http.js';
import { Secret } from '../secret.js';
import type { AdminTokenStore } from '../stores/admin-token-store.js';
import type { Logger } from '../types.js';
import { cutText } from '../well-formed.js';
import { CommerceError, commerceFailure, commerceJson, describeMagentoError, MAX_PLATFORM_TEXT, parameterText, readMagentoError, type MagentoErrorBody } from './errors.js';
import { REFUSAL_KEY_SUFFIX, RememberedRefusals, rememberedRefusal } from './login-refusal.js';

export interface AdminTokenDeps {
  config: CommerceConfig;
  http: HttpPolicy;
  logger: Logger;
  store: AdminTokenStore;
  /** Clock in milliseconds, for this instance's own copy of the token; `Date.now` by default. */
  now?: (() => number) | undefined;
}

/** How often an instance waiting for another instance's refresh looks for the new token. */
const SHARED_REFRESH_POLL_MS = 50;

/** Tokens are cached this much shorter than their lifetime: 5 minutes, or a tenth of a short lifetime. */
function tokenTtlMs(lifetimeMs: number): number {
  return lifetimeMs - Math.min(5 * 60_000, Math.floor(lifetimeMs / 10));
}

const TWO_FACTOR = /2fa|two[- ]factor/i;

/** One token request shared by its callers; aborted once every caller has given up on it. */
interface Flight {
  promise: Promise<string>;
  /** The refused token it replaces: it may answer with any other, one read from the store included. */
  rejected: string | undefined;
  controller: AbortController;
  /** Callers still waiting that can give up (Infinity once one without a signal joined). */
  waiting: number;
  /** The login was sent: it runs to its end whoever still waits, so that a refusal is recorded (Magento counts it anyway). */
  sent: boolean;
}

/**
 * The admin token: cached in the store for its lifetime less a margin, fetched by one request
 * however many calls wait for it, and never retried after a refusal (Magento locks the account
 * after repeated failed logins). A refused login is remembered (1 minute, growing with refusals in a
 * row: see loginRefusalCooldownMs) by every instance that shares the store.
 *
 * With a shared store that offers a refresh lock (Redis), one instance logs in at a time and the
 * others poll the store for its token. When the store is unreachable, the instance keeps using its
 * own copy of the token, or logs in without the store: order reads never depend on it.
 */
export class AdminTokens {
  readonly #deps: AdminTokenDeps;
  readonly #key: string;
  #inflight: Flight | undefined;
  /** This instance's copy of the last token it obtained, used only while the store is unreachable. */
  #local: { token: Secret; expiresAt: number } | undefined;
  #storeDown = false;
  readonly #refusals: RememberedRefusals;
  /** The token whose rejection led to a refused login: never sent again (the store has no delete). */
  #dead: Secret | undefined;

  constructor(deps: AdminTokenDeps) {
    this.#deps = deps;
    // Per platform and user, not per store scope: Magento counts refused logins per user name, and an admin token
    // works in every scope, so instances for two store views must share one refusal chain (and one token).
    const { url, username } = deps.config;
    this.#key = `paywidget:commerce-admin-token:${url}|${username}`;
    this.#refusals = new RememberedRefusals(deps.store, `${this.#key}${REFUSAL_KEY_SUFFIX}`, deps.logger, () => this.#now());
  }

  /** A cached token, or a fresh one; `signal` stops the wait for a login. */
  async get(signal?: AbortSignal): Promise<string> {
    return (await this.#read()) ?? this.refresh(undefined, signal);
  }

  /**
   * A new token because `rejected` was refused (or none was cached). One request at a time: calls
   * that arrive meanwhile share it, and a token another caller already replaced is not fetched again.
   */
  refresh(rejected: string | undefined, signal?: AbortSignal): Promise<string> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const joined = this.#inflight;
    if (joined === undefined) return this.#wait(this.#start(rejected), signal);
    const answer = this.#wait(joined, signal);
    if (rejected === undefined || joined.rejected === rejected) return answer;
    // Begun for another refused token, it may answer with this one (read from the store, put there by another
    // instance or an earlier refresh): then ask again, and that refresh logs in.
    return answer.then((token) => (token === rejected ? this.refresh(rejected, signal) : token));
  }

  /** Waits for a token request; `signal` ends this caller's wait, and a request not yet sent once no caller waits. */
  #wait(flight: Flight, signal: AbortSignal | undefined): Promise<string> {
    if (!signal) {
      flight.waiting = Infinity; // a caller that cannot give up keeps the request going
      return flight.promise;
    }
    flight.waiting += 1;
    return new Promise((resolve, reject) => {
      // The request is shared, so one caller's abort only ends its own wait. The last one's drops a request still
      // waiting for the shared lock; a login already sent goes on (new callers join it): aborted, Magento would still
      // count a refusal that no one here recorded, and the next call would send the same password again.
      const leave = () => {
        reject(signal.reason); // as fetch does: the caller's own reason
        if (--flight.waiting > 0 || flight.sent) return;
        if (this.#inflight === flight) this.#inflight = undefined;
        flight.controller.abort();
      };
      listenForAbort(signal, leave);
      flight.promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', leave));
    });
  }

  #start(rejected: string | undefined): Flight {
    const controller = new AbortController();
    // #refresh marks the flight sent, so it gets the flight before the flight gets its promise.
    const flight = { controller, rejected, waiting: 0, sent: false } as Flight;
    flight.promise = this.#refresh(rejected, flight).finally(() => {
      if (this.#inflight === flight) this.#inflight = undefined;
    });
    this.#inflight = flight;
    return flight;
  }

  async #refresh(rejected: string | undefined, flight: Flight): Promise<string> {
    const { signal } = flight.controller;
    // Refused by the platform: never sent again, though it stays in the store (which has no delete) until a login replaces it.
    if (rejected !== undefined) this.#dead = new Secret(rejected);
    const usable = (token: string | undefined) => (token !== undefined && token !== rejected ? token : undefined);
    const current = usable(await this.#read());
    if (current !== undefined) return current;
    await this.#refusals.failIfRefused();
    const { store, logger, http } = this.#deps;
    const fetchAndCache = () => this.#fetchAndCache(flight);
    // After a wait on the shared lock, another instance's login may have been refused meanwhile: asked again.
    const fetchAfterWait = async () => {
      await this.#refusals.failIfRefused();
      return fetchAndCache();
    };
    if (!store.acquireRefreshLock) return fetchAndCache();

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
        return fetchAndCache();
      }
      if (lock !== undefined) {
        try {
          // Another instance may have finished its refresh between our read and our lock.
          return usable(await this.#read()) ?? (await fetchAfterWait());
        } finally {
          await store.releaseRefreshLock?.(this.#key, lock).catch((error: unknown) => {
            logger.warn({ err: error, service: 'commerce' }, 'admin token store failed to free the refresh lock; it expires by itself');
          });
        }
      }
      await new Promise((resolve) => setTimeout(resolve, SHARED_REFRESH_POLL_MS));
      if (signal.aborted) throw signal.reason;
      const shared = usable(await this.#read());
      if (shared !== undefined) return shared;
      if (performance.now() > deadline) {
        logger.warn({ service: 'commerce' }, 'admin token refresh lock held too long by another instance: refreshing here');
        return fetchAfterWait();
      }
    }
  }

  /**
   * The store's token; this instance's own copy when the store is unreachable. Never the token whose
   * rejection led to a refused login: the store has no delete, and sending it again only earns a 401.
   */
  async #read(): Promise<string | undefined> {
    const token = await this.#readAny();
    return token !== undefined && token === this.#dead?.reveal() ? undefined : token;
  }

  async #readAny(): Promise<string | undefined> {
    const { store, logger } = this.#deps;
    try {
      const token = await store.get(this.#key);
      this.#storeDown = false;
      // One that cannot be sent (kept by a version that did not check it): absent, so a login replaces it.
      return token !== undefined && BEARER_TOKEN.test(token) ? token : undefined;
    } catch (error) {
      if (!this.#storeDown) logger.warn({ err: error, service: 'commerce' }, "admin token store unreachable: using this instance's own token until it is back");
      this.#storeDown = true;
      const local = this.#local;
      return local && this.#now() < local.expiresAt ? local.token.reveal() : undefined;
    }
  }

  /** One login for `flight`, once no refused login holds it off, and its token kept. */
  async #fetchAndCache(flight: Flight): Promise<string> {
    // Every caller gave up while the store was read: no one waits for this login, and a new flight may send its own.
    flight.controller.signal.throwIfAborted();
    let token: string;
    try {
      flight.sent = true;
      token = await this.#fetch();
    } catch (error) {
      const remembered = rememberedRefusal(error, this.#deps.config.url);
      if (remembered) await this.#refusals.remember(remembered);
      throw error;
    }
    this.#dead = undefined; // an older platform may answer a login with the token it refused before
    await this.#refusals.forget();
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

  /** One login, under its own time-outs only (see Flight.sent). */
  async #fetch(): Promise<string> {
    const { config, http, logger } = this.#deps;
    const path = `/rest/${encodeURIComponent(config.scope)}/V1/integration/admin/token`;
    const response = await callUpstream({
      service: 'commerce',
      method: 'POST',
      url: `${config.url}${path}`,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ username: config.username, password: config.password.reveal() }),
      secrets: [config.password.reveal()],
      // Never retried: a refused login counts towards Magento's lockout.
      policy: { maxRetries: 0 },
    }, http, logger);

    if (!response.ok) {
      const failure = loginFailure(config, response);
      // Once, here, with the address (a host with a Pay instance per shop tells from it whose login was refused):
      // the route that needed the token logs it no more.
      logger.error({ service: 'commerce', status: response.status, route: `POST ${path}`, url: config.url, username: config.username, err: failure }, 'commerce platform refused the admin token request');
      throw loggedWhereItArose(failure);
    }

    const token = commerceJson(response, 'the admin token request');
    if (typeof token !== 'string' || token.trim() === '') {
      throw new PayError('UPSTREAM_INVALID_RESPONSE', 'The commerce platform answered the admin token request without a token (expected a JSON string).', { details: { service: 'commerce' } });
    }
    // Cached for hours and sent on every read: one that cannot be a header value would fail each of them
    // as if the platform were unreachable, and no 401 would ever come to replace it. Never quoted: it is a secret.
    if (!BEARER_TOKEN.test(token)) {
      throw new PayError('UPSTREAM_INVALID_RESPONSE', `The commerce platform answered the admin token request with a string that cannot be sent as a Bearer credential (${token.length} characters, not all printable ASCII without spaces). Check that COMMERCE_URL (commerce.url) reaches the platform itself, not a proxy or login page.`, { details: { service: 'commerce' } });
    }
    logger.info({ service: 'commerce', scope: config.scope }, 'commerce admin token obtained');
    return token;
  }
}

/** Why the platform refused a login, as the error the callers get. */
function loginFailure(config: CommerceConfig, response: UpstreamResponse): PayError {
  // A password echoed back in the body (Magento fills a message's parameters in) was redacted by callUpstream, any escape.
  const body = readMagentoError(response);
  if (body && TWO_FACTOR.test(body.message)) return twoFactorError(response.status, body);
  if (response.status === 401) {
    const said = body ? describeMagentoError(body) : `HTTP 401`;
    return new CommerceError('COMMERCE_AUTH_FAILED', `The commerce platform at ${config.url} refused the admin login of '${config.username}': ${said} Not retried, since Magento locks an account after repeated failures: check COMMERCE_USERNAME and COMMERCE_PASSWORD, or wait until a locked account is released.`, { upstreamStatus: 401, body });
  }
  // The token call is always a POST: only the URL and the store scope in it can be wrong.
  return commerceFailure('the admin token request', response, 'COMMERCE_URL (commerce.url) and COMMERCE_SCOPE (commerce.scope)');
}

/** What Magento issues (32 alphanumerics, or a JWT from 2.4.4 on): printable ASCII without spaces. */
const BEARER_TOKEN = /^[\x21-\x7E]+$/;

function twoFactorError(status: number, body: MagentoErrorBody): CommerceError {
  const params = body.parameters as { active_providers?: unknown } | undefined;
  // Provider codes such as 'google': values only, a few, cut short (the body is the platform's word, or a proxy's).
  const providers = Array.isArray(params?.active_providers) ? params.active_providers.slice(0, 10).flatMap((p: unknown) => parameterText(p) ?? []) : [];
  const endpoints = (providers.length ? providers : ['{provider}']).map((p) => `POST /rest/V1/tfa/provider/${p}/authenticate`).join(', ');
  return new CommerceError('COMMERCE_TWO_FACTOR_REQUIRED', `The commerce platform requires two-factor authentication for admin logins ("${cutText(body.message, MAX_PLATFORM_TEXT)}"${providers.length ? `; providers: ${providers.join(', ')}` : ''}). Its token is only issued by the 2FA provider endpoints (${endpoints}) with a one-time code, which an unattended server cannot supply: use an admin account exempt from 2FA for the API, or disable Magento_TwoFactorAuth for API logins.`, { upstreamStatus: status, body });
}

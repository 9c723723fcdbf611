import type { CommerceConfig, HttpPolicy } from '../config.js';
import { callUpstream, type UpstreamResponse } from '../http.js';
import type { BodyBuffers } from '../transport/body-buffers.js';
import type { Logger } from '../types.js';
import { CommerceError, describeMagentoError, readMagentoError } from './errors.js';
import type { AdminTokens } from './token.js';

export interface CommerceClientDeps {
  config: CommerceConfig;
  http: HttpPolicy;
  logger: Logger;
  tokens: AdminTokens;
}

/**
 * Authenticated reads of the Order Retrieval API. GET by default (stock Magento serves reads only on
 * GET); `readMethod: 'POST'` follows the document literally. A 401 refreshes the token once and
 * retries once; 5xx, 429 and connection errors are retried by callUpstream.
 */
export class CommerceClient {
  readonly #deps: CommerceClientDeps;

  constructor(deps: CommerceClientDeps) {
    this.#deps = deps;
  }

  /** `/rest/{scope}/V1/…` */
  path(endpoint: string): string {
    return `/rest/${encodeURIComponent(this.#deps.config.scope)}/V1${endpoint}`;
  }

  /** Reads `endpoint` (e.g. `/orders/3`); the response may be any status but 401. */
  async read(endpoint: string, query: URLSearchParams | undefined, signal?: AbortSignal, bodies?: BodyBuffers): Promise<UpstreamResponse> {
    const { tokens, logger } = this.#deps;
    const token = await tokens.get(signal);
    const first = await this.#send(endpoint, query, token, signal, bodies);
    if (first.status !== 401) return first;

    logger.info({ service: 'commerce', route: this.path(endpoint) }, 'commerce admin token refused; refreshing it once');
    const fresh = await tokens.refresh(token, signal);
    const second = await this.#send(endpoint, query, fresh, signal, bodies);
    if (second.status !== 401) return second;
    const body = readMagentoError(second);
    throw new CommerceError('COMMERCE_AUTH_FAILED', `The commerce platform refused a fresh admin token for ${this.path(endpoint)}${body ? `: ${describeMagentoError(body)}` : ''}. The admin user may lack the Magento_Sales::sales permission.`, { upstreamStatus: 401, body });
  }

  #send(endpoint: string, query: URLSearchParams | undefined, token: string, signal: AbortSignal | undefined, bodies: BodyBuffers | undefined): Promise<UpstreamResponse> {
    const { config, http, logger } = this.#deps;
    const search = query && query.size > 0 ? `?${query.toString()}` : '';
    return callUpstream({
      service: 'commerce',
      method: config.readMethod,
      url: `${config.url}${this.path(endpoint)}${search}`,
      headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${token}` },
      secrets: [token],
      signal,
      bodies,
    }, http, logger);
  }
}


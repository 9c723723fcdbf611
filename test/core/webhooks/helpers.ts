import { createPay, type Awaitable, type ClaimStore, type Pay, type PayOptions, type PayResponse } from 'paywidget-server';
import { signWebhook } from 'paywidget-server/testing';
import { Secret } from '../../../src/core/secret.js';
import { MemoryClaimStore } from '../../../src/core/stores/memory-claim-store.js';
import { selectHmac, type HmacFactory } from '../../../src/core/webhooks/hmac.js';
import { createWebhooks, type WebhooksDeps } from '../../../src/core/webhooks/index.js';
import { captureLogger } from '../../helpers/capture-logger.js';

export const SECRET = 'whsec_test_Zq7Lw0ZpKc4a9Yx3';
/** Unix seconds the test clock starts at. */
export const T0 = 1_717_171_717;

/** A pay instance on a clock the test moves (`clock.now` is milliseconds). */
export function payWithClock(overrides: Partial<PayOptions> = {}): { pay: Pay; clock: { now: number } } {
  const clock = { now: T0 * 1000 };
  const pay = createPay({
    payment: { apiUrl: 'http://127.0.0.1:9', merchantId: 'm', apiKey: 'k', webhookSecret: SECRET },
    env: {},
    now: () => clock.now,
    ...overrides,
  });
  return { pay, clock };
}

export interface Delivery {
  body: string | Uint8Array;
  headers: Record<string, string>;
}

export function delivery(payload: unknown, options: { eventId?: string; timestamp?: number; secret?: string } = {}): Delivery {
  const signed = signWebhook({ payload, secret: options.secret ?? SECRET, timestamp: options.timestamp ?? T0, eventId: options.eventId ?? 'evt_1' });
  return { body: signed.body, headers: { ...signed.headers } };
}

export interface Answer extends PayResponse {
  json: { received?: boolean; duplicate?: boolean; error?: { code: string; message: string } };
}

export async function post(pay: Pay, d: Delivery): Promise<Answer> {
  const response = await pay.handle({ method: 'POST', path: '/webhooks', headers: d.headers, rawBody: d.body });
  if (!response) throw new Error('POST /webhooks was not answered');
  const text = typeof response.body === 'string' ? response.body : Buffer.from(response.body).toString('utf8');
  return { ...response, json: JSON.parse(text) as Answer['json'] };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** A handler for every event that counts its runs and holds each delivery open until `release()`. */
export function holdingHandler(pay: Pay): { runs: () => number; release: () => void } {
  const gate = deferred();
  let runs = 0;
  pay.webhooks.onAny(async () => {
    runs++;
    await gate.promise;
  });
  return { runs: () => runs, release: gate.resolve };
}

/**
 * Wraps a store, counting every call, and can be switched to fail. With `atOnce` it answers and fails
 * synchronously, as a store may (the memory store does); else with promises, as Redis does.
 */
export class CountingStore implements ClaimStore {
  calls: string[] = [];
  failing: ReadonlySet<'claim' | 'complete' | 'release' | 'bind'> = new Set();

  constructor(readonly inner: ClaimStore, readonly atOnce = false) {}

  #call<T>(method: 'claim' | 'complete' | 'release' | 'bind', key: string, run: () => Awaitable<T>): Awaitable<T> {
    this.calls.push(`${method} ${key}`);
    const attempt = () => {
      if (this.failing.has(method)) throw new Error('ECONNREFUSED 127.0.0.1:6379 (test store is down)');
      return run();
    };
    return this.atOnce ? attempt() : Promise.resolve().then(attempt);
  }

  claim(key: string, leaseMs: number) {
    return this.#call('claim', key, () => this.inner.claim(key, leaseMs));
  }

  complete(key: string, token: string, retentionMs: number) {
    return this.#call('complete', key, () => this.inner.complete(key, token, retentionMs));
  }

  release(key: string, token: string) {
    return this.#call('release', key, () => this.inner.release(key, token));
  }

  bind(key: string, value: string, ttlMs: number) {
    return this.#call('bind', key, () => this.inner.bind(key, value, ttlMs));
  }
}

/** WebCrypto forced the way an edge runtime would see it: no process, only crypto.subtle. */
export const webCryptoFactory = selectHmac({ crypto: globalThis.crypto }) as HmacFactory;

/** createWebhooks on the test clock, with the runtime's HMAC (undefined) or a forced one. */
export function webhooksWith(hmac: HmacFactory | undefined, secrets: readonly string[] = [SECRET], extra: Partial<WebhooksDeps> = {}) {
  return createWebhooks({
    secrets: () => secrets.map((s) => new Secret(s)),
    options: undefined,
    store: new MemoryClaimStore({ maxEntries: 1_000 }),
    logger: captureLogger(),
    now: () => T0 * 1000,
    ...(hmac ? { hmac } : {}),
    ...extra,
  });
}

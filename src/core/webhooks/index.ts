import { isPending, type Awaitable } from '../awaitable.js';
import { PayError } from '../errors.js';
import { describeKind } from '../option-types.js';
import type { Route } from '../router.js';
import type { Secret } from '../secret.js';
import type { ClaimStore } from '../stores/claim-store.js';
import type { Logger } from '../types.js';
import { BackgroundWrites } from './background-writes.js';
import { createDispatcher, type WebhookErrorHandler, type WebhookHandler, type WebhookHandlerOf } from './dispatch.js';
import { WebhookVerificationError, type WebhookVerificationCode } from './errors.js';
import { selectHmac, type Hmac, type HmacFactory } from './hmac.js';
import { resolveWebhookOptions, type WebhookOptions } from './options.js';
import { LeaseRenewer } from './lease-renewer.js';
import { webhookRoute } from './route.js';
import { verifyDelivery, type CheckedDelivery, type VerifiedWebhook, type VerifyInput } from './verify.js';

/** What `verifySafe` answers: the verified delivery, or why it must not be trusted. */
export type VerifySafeResult =
  | { ok: true; event: VerifiedWebhook }
  | { ok: false; code: WebhookVerificationCode; error: WebhookVerificationError };

/** `pay.webhooks`. */
export interface Webhooks {
  /** Checks a delivery and parses its JSON; throws WebhookVerificationError (with a `code`) when it must not be trusted. */
  verify(input: VerifyInput): Promise<VerifiedWebhook>;
  /** The same, answering `{ ok: false, code, error }` instead of throwing. */
  verifySafe(input: VerifyInput): Promise<VerifySafeResult>;
  /**
   * Runs `handler` for events of this type (or these types), once per event id: unless a handler of the
   * event fails, when the delivery is answered 500 and the sender's retry runs every handler again, those
   * that succeeded too (make them idempotent). Returns a function that removes it.
   */
  on<Type extends string>(type: Type | readonly Type[], handler: WebhookHandlerOf<Type>): () => void;
  /** Runs `handler` for every event, whatever its type. */
  onAny(handler: WebhookHandler): () => void;
  /** Told when a handler failed; the delivery is still answered 500 so the sender retries. */
  onError(handler: WebhookErrorHandler): () => void;
}

/** Options of `pay.drain()`. */
export interface DrainOptions {
  /** Resolve after this long at most, leaving the writes still pending to expire with their leases. Default: no limit. */
  timeoutMs?: number | undefined;
}

export interface WebhooksWithRoute extends Webhooks {
  /** `POST /webhooks` for the core router. */
  readonly route: Route;
  /** Waits for the claim writes retried in the background (`pay.drain()`). */
  drain(options?: DrainOptions): Promise<void>;
  /** Its body limit, resolved. */
  readonly maxBodyBytes: number;
}

export interface WebhooksDeps {
  /** Read at the first verification, so a missing secret fails there, naming its variable. */
  secrets: () => readonly Secret[];
  options: WebhookOptions | undefined;
  store: ClaimStore;
  logger: Logger;
  /** Clock in milliseconds. */
  now: () => number;
  /** The HMAC implementation; chosen for the runtime by default (node:crypto, else WebCrypto). Tests force WebCrypto here. */
  hmac?: HmacFactory;
  /** The library's own handlers (the payment ledger), run inside the claim before the merchant's. */
  internalHandlers?: readonly WebhookHandler[];
}

export function createWebhooks(deps: WebhooksDeps): WebhooksWithRoute {
  const policy = resolveWebhookOptions(deps.options);
  const verifyPolicy = { toleranceSeconds: policy.toleranceSeconds, maxBodyBytes: policy.maxBodyBytes, now: deps.now, secretCount: 0, payloadEventId: policy.payloadEventId };
  const dispatcher = createDispatcher(deps.logger, policy.eventType, deps.internalHandlers);
  const background = new BackgroundWrites(policy.waitUntil, deps.logger);

  // Built on first use: no key material is prepared for an app that never receives a webhook.
  const source: HmacFactory | Promise<HmacFactory> = deps.hmac ?? selectHmac();
  let hmac: Hmac | undefined;
  const build = (factory: HmacFactory) => {
    const secrets = deps.secrets();
    verifyPolicy.secretCount = secrets.length;
    return (hmac = factory(secrets.map((s) => s.reveal())));
  };
  let pending: Promise<Hmac> | undefined;
  const load = (): Hmac | Promise<Hmac> => hmac ?? (typeof source === 'function' ? build(source) : (pending ??= source.then(build)));

  // At once with node:crypto once its keys are built; a promise the first time, or with WebCrypto.
  const verifyNow = (input: VerifyInput): Awaitable<CheckedDelivery> => {
    const h = load();
    return isPending(h) ? h.then((built) => verifyDelivery(built, verifyPolicy, input)) : verifyDelivery(h, verifyPolicy, input);
  };
  const verify = async (input: VerifyInput): Promise<VerifiedWebhook> => {
    const { eventId, timestamp, payload, secretIndex } = await verifyNow(input ?? ({} as VerifyInput));
    return { eventId, timestamp, payload, secretIndex };
  };

  return {
    verify,
    async verifySafe(input) {
      try {
        return { ok: true, event: await verify(input) };
      } catch (error) {
        if (error instanceof WebhookVerificationError) return { ok: false, code: error.code, error };
        throw error;
      }
    },
    on: dispatcher.on,
    onAny: dispatcher.onAny,
    onError: dispatcher.onError,
    maxBodyBytes: policy.maxBodyBytes,
    drain: async (options) => background.drain(drainTimeout(options)),
    route: webhookRoute({
      verify: verifyNow,
      maxBodyBytes: policy.maxBodyBytes,
      dispatcher,
      logger: deps.logger,
      dedupe: {
        store: deps.store, logger: deps.logger, leaseMs: policy.leaseMs, retentionMs: policy.retentionMs, signatureRetentionMs: policy.signatureRetentionMs,
        renewer: new LeaseRenewer(deps.store, policy.leaseMs, deps.logger),
        background,
      },
    }),
  };
}

function drainTimeout(options: DrainOptions | undefined): number {
  const timeoutMs = options?.timeoutMs ?? Infinity;
  if (typeof timeoutMs === 'number' && timeoutMs >= 0) return timeoutMs;
  throw new PayError('CONFIG_INVALID', `pay.drain({ timeoutMs }) takes a number of milliseconds (0 or more), got ${describeKind(timeoutMs)}.`, { details: { options: ['timeoutMs'] } });
}

export { WebhookVerificationError, WebhookHandlerError, type WebhookVerificationCode } from './errors.js';
export type { WebhookEvent, WebhookHandler, WebhookHandlerOf, WebhookErrorHandler, WebhookFailure } from './dispatch.js';
export type { WebhookOptions } from './options.js';
export type { VerifiedWebhook, VerifyInput } from './verify.js';

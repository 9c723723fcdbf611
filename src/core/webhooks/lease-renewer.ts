import type { ClaimStore } from '../stores/claim-store.js';
import type { Logger } from '../types.js';

/** A handler still running after this many leases is taken for hung: its claim lapses, and a retry runs the event. */
export const MAX_RENEWED_LEASES = 40;

/**
 * Keeps the claims of the deliveries whose handlers are running: every third of a lease, each is renewed,
 * so a handler slower than the lease is not joined by a duplicate delivery's run. One timer for all of
 * them, and only while some run: a handler that ends within the lease costs a Map entry.
 */
export class LeaseRenewer {
  /** Lease token → claimed key, when to stop renewing it, and when the last renewal that held it was sent (real time). */
  readonly #running = new Map<string, { key: string; until: number; renewedAt: number | undefined }>();
  readonly #store: ClaimStore;
  readonly #leaseMs: number;
  readonly #logger: Logger;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(store: ClaimStore, leaseMs: number, logger: Logger) {
    this.#store = store;
    this.#leaseMs = leaseMs;
    this.#logger = logger;
  }

  /** Whether the store can renew (a custom ClaimStore may not implement it). */
  get renews(): boolean {
    return typeof this.#store.renew === 'function';
  }

  hold(key: string, token: string): void {
    if (!this.renews) return;
    this.#running.set(token, { key, until: performance.now() + (MAX_RENEWED_LEASES - 1) * this.#leaseMs, renewedAt: undefined });
    if (this.#timer === undefined) {
      // The timer reaches the renewer weakly: once no handler runs, it must not keep a Pay the app dropped
      // (its stores, megabytes of them) alive until its next tick.
      const renewer = new WeakRef(this);
      const timer = setInterval(() => {
        const self = renewer.deref();
        if (self) self.#renewAll();
        else clearInterval(timer);
      }, this.#leaseMs / 3);
      timer.unref?.();
      this.#timer = timer;
    }
  }

  /** Stops renewing; answers when the last renewal that held the claim was sent, from which its lease runs. */
  drop(token: string): number | undefined {
    const renewedAt = this.#running.get(token)?.renewedAt;
    this.#running.delete(token);
    return renewedAt;
  }

  #renewAll(): void {
    if (this.#running.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      return;
    }
    const now = performance.now();
    for (const [token, entry] of this.#running) {
      const { key, until } = entry;
      if (now > until) {
        this.#running.delete(token);
        this.#logger.warn({ key }, `webhook handler still running after ${MAX_RENEWED_LEASES} leases (webhooks.leaseMs): taken for hung, its claim lapses and the next delivery of the event runs it`);
        continue;
      }
      // Through a promise: a store may answer at once, or throw where another rejects.
      Promise.resolve().then(() => this.#store.renew!(key, token, this.#leaseMs)).then(
        (held) => {
          if (held) return void (entry.renewedAt = now);
          if (!this.#running.delete(token)) return;
          this.#logger.warn({ key }, 'webhook claim was lost while its handler ran (not renewed in time: the event loop was blocked, or the store unreachable); a duplicate delivery may run beside it');
        },
        (error: unknown) => this.#logger.warn({ err: error, key }, 'could not renew a webhook claim while its handler runs; retrying at the next renewal'),
      );
    }
  }
}

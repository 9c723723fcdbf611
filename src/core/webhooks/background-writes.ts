import { isPending } from '../awaitable.js';
import type { Logger } from '../types.js';

/** Waits `ms`, or less when `until` settles first: true when the time ran out. */
export type Wait = (ms: number, until?: Promise<unknown>) => Promise<boolean>;

/**
 * The claim writes retried after their delivery was answered (a done mark, a release). A shutdown must
 * wait for them: a done mark dropped lets a duplicate delivery run the event again once its lease ends.
 */
export class BackgroundWrites {
  readonly #running = new Set<Promise<void>>();
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  #draining = 0;
  readonly #waitUntil: ((work: Promise<unknown>) => void) | undefined;
  readonly #logger: Logger;

  /** `waitUntil`: a serverless platform's keep-alive, told of each write (webhooks.waitUntil). */
  constructor(waitUntil: ((work: Promise<unknown>) => void) | undefined, logger: Logger) {
    this.#waitUntil = waitUntil;
    this.#logger = logger;
  }

  /** Runs `work` in the background, waiting only through `wait`. It handles its own errors. */
  start(work: (wait: Wait) => Promise<void>): void {
    const run: Promise<void> = work(this.#wait)
      .catch(() => undefined)
      .finally(() => this.#running.delete(run));
    this.#running.add(run);
    if (this.#waitUntil) this.#keepAlive(this.#waitUntil, run);
  }

  /** Hands `run` to the platform's keep-alive; one that fails (Next's after() outside a request) only loses that protection. */
  #keepAlive(waitUntil: (work: Promise<unknown>) => void, run: Promise<void>): void {
    const refused = (error: unknown) => this.#logger.warn({ err: error }, 'webhooks.waitUntil threw; the claim write goes on without it, and a function frozen before it lands may let a duplicate delivery run the event again');
    try {
      // Typed to return nothing, but an async function fits that type: its rejection must not go unhandled.
      const kept: unknown = waitUntil(run);
      if (isPending(kept)) kept.then(undefined, refused);
    } catch (error) {
      refused(error);
    }
  }

  /**
   * Resolves once every write started, and any started meanwhile, has landed or given up at its lease's end;
   * or after `timeoutMs`, leaving what is still pending to expire with its lease.
   */
  async drain(timeoutMs = Infinity): Promise<void> {
    this.#draining += 1;
    // From now on the waits keep the process alive, or it could exit before the write lands.
    for (const timer of this.#timers) (timer as { ref?: () => void }).ref?.();
    const deadline = performance.now() + timeoutMs;
    try {
      while (this.#running.size > 0) {
        const all = Promise.all(this.#running);
        if (timeoutMs === Infinity) await all;
        else if (await this.#wait(deadline - performance.now(), all)) return;
      }
    } finally {
      // A drain that gave up leaves its writes to their leases, as outside a drain: they no longer hold the process.
      if (--this.#draining === 0) for (const timer of this.#timers) (timer as { unref?: () => void }).unref?.();
    }
  }

  readonly #wait: Wait = (ms, until) => new Promise((resolve) => {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      resolve(true);
    }, Math.max(0, ms));
    this.#timers.add(timer);
    // Outside a drain, a process with nothing else to do may exit: the claim then expires with its lease.
    if (this.#draining === 0) (timer as { unref?: () => void }).unref?.();
    const settled = () => {
      clearTimeout(timer);
      this.#timers.delete(timer);
      resolve(false);
    };
    void until?.then(settled, settled);
  });
}

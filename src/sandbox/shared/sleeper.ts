import { MAX_TIMER_MS } from '../../core/max-timer.js';

/** Timers a fake service can cut short: on close, every pending wait resolves at once. */
export class Sleeper {
  readonly #timers = new Map<ReturnType<typeof setTimeout>, () => void>();
  /** Waits longer than a timer can hold: they end only with wakeAll(). */
  readonly #endless = new Set<() => void>();
  #woken = false;

  /** Waits `ms`, or less if wakeAll() comes first; resolves at once after it. */
  sleep(ms: number): Promise<void> {
    if (this.#woken) return Promise.resolve();
    return new Promise((resolve) => {
      if (ms > MAX_TIMER_MS) {
        this.#endless.add(resolve);
        return;
      }
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        resolve();
      }, ms);
      this.#timers.set(timer, resolve);
    });
  }

  wakeAll(): void {
    this.#woken = true;
    for (const [timer, wake] of this.#timers) {
      clearTimeout(timer);
      wake();
    }
    this.#timers.clear();
    for (const wake of this.#endless) wake();
    this.#endless.clear();
  }
}

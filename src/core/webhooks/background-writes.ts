/**
 * The claim writes retried after their delivery was answered (a done mark, a release). A shutdown must
 * wait for them: a done mark dropped lets a duplicate delivery run the event again once its lease ends.
 */
export class BackgroundWrites {
  readonly #running = new Set<Promise<void>>();
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  #draining = false;

  /** Runs `work` in the background; it waits between attempts with `pause`. It handles its own errors. */
  start(work: (pause: (ms: number) => Promise<void>) => Promise<void>): void {
    const run: Promise<void> = work((ms) => this.#pause(ms))
      .catch(() => undefined)
      .finally(() => this.#running.delete(run));
    this.#running.add(run);
  }

  /** Resolves once every write started, and any started meanwhile, has landed or given up at its lease's end. */
  async drain(): Promise<void> {
    this.#draining = true;
    // From now on the pauses keep the process alive, or it could exit before the write lands.
    for (const timer of this.#timers) (timer as { ref?: () => void }).ref?.();
    try {
      while (this.#running.size > 0) await Promise.all(this.#running);
    } finally {
      this.#draining = false;
    }
  }

  #pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        resolve();
      }, ms);
      this.#timers.add(timer);
      // Outside a drain, a process with nothing else to do may exit: the claim then expires with its lease.
      if (!this.#draining) (timer as { unref?: () => void }).unref?.();
    });
  }
}

import { listenForAbort } from './abort-listeners.js';

/**
 * Resolves true after `ms`, or false as soon as the signal aborts. A wait that ends leaves no listener on the
 * (often long-lived) signal. Written here rather than with node:timers/promises, which the edge runtime lacks.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    if (signal) listenForAbort(signal, onAbort);
  });
}

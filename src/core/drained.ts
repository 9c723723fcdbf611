import type { Writable } from 'node:stream';

/** Resolves when the stream takes more, or will never again (an error or a close), or `signal` stops the wait (a reader that reads nothing). */
export function drained(stream: Writable, signal?: AbortSignal): Promise<void> {
  if (stream.destroyed || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      for (const event of ['drain', 'close', 'error']) stream.off(event, done);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    for (const event of ['drain', 'close', 'error']) stream.once(event, done);
    signal?.addEventListener('abort', done, { once: true });
  });
}

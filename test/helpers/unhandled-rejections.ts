import { onTestFinished } from 'vitest';

/**
 * Records the unhandled rejections of the test that calls it, until that test ends. `escaped()` answers them
 * once Node could have reported one: a macrotask after the microtasks of the rejection have run.
 */
export function recordUnhandledRejections(): { escaped(): Promise<unknown[]> } {
  const seen: unknown[] = [];
  const record = (reason: unknown) => void seen.push(reason);
  process.on('unhandledRejection', record);
  onTestFinished(() => void process.off('unhandledRejection', record));
  return {
    async escaped() {
      await new Promise((resolve) => setImmediate(resolve));
      return seen;
    },
  };
}

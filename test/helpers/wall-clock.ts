import { vi } from 'vitest';

/**
 * Steps the wall clock (Date.now) back by `byMs` once `afterMs` have passed, as an NTP step or a resumed VM
 * does, while performance.now() runs on. `restore()` puts it back and answers whether the step happened.
 */
export function stepWallClockBack(byMs: number, afterMs: number): { restore(): boolean } {
  const wall = Date.now;
  let spy: ReturnType<typeof vi.spyOn> | undefined;
  const step = setTimeout(() => {
    const offset = wall() - byMs - performance.now();
    spy = vi.spyOn(Date, 'now').mockImplementation(() => offset + performance.now());
  }, afterMs);
  return {
    restore() {
      clearTimeout(step);
      spy?.mockRestore();
      return spy !== undefined;
    },
  };
}

import { vi } from 'vitest';

/**
 * Steps the wall clock (Date.now) back by `byMs`, as an NTP step or a resumed VM does, while performance.now()
 * runs on: once `afterMs` have passed, or when `step()` is called (from inside the work, so it surely falls
 * mid-way). `restore()` puts it back and answers whether the step happened.
 */
export function stepWallClockBack(byMs: number, afterMs?: number): { step(): void; restore(): boolean } {
  const wall = Date.now;
  let spy: ReturnType<typeof vi.spyOn> | undefined;
  const step = () => {
    if (spy) return;
    const offset = wall() - byMs - performance.now();
    spy = vi.spyOn(Date, 'now').mockImplementation(() => offset + performance.now());
  };
  const timer = afterMs === undefined ? undefined : setTimeout(step, afterMs);
  return {
    step,
    restore() {
      clearTimeout(timer);
      spy?.mockRestore();
      return spy !== undefined;
    },
  };
}

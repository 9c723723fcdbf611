/**
 * A value now, or a promise of it. The in-memory stores answer at once, and the webhook route then runs
 * from the request to the answer without a turn of the event loop per step: `await` on a value that is
 * not a promise still costs one, and an allocation, on the hottest path of the library.
 */
export type Awaitable<T> = T | PromiseLike<T>;

/** Whether the value is a promise (or any thenable) to wait for, rather than the answer itself. */
export function isPending<T>(value: Awaitable<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}

/** Waits until `check` holds (anything but undefined or false), polling every 10 ms, or fails after `ms` naming `what`. */
export async function eventually<T>(check: () => Promise<T | undefined> | T | undefined, ms = 3_000, what = 'the condition'): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > until) throw new Error(`waited ${ms} ms for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

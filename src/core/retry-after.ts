/** A Retry-After header (seconds, or an HTTP date) in milliseconds from now; undefined when unreadable. */
export function parseRetryAfter(value: string): number | undefined {
  if (/^\d+$/.test(value.trim())) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

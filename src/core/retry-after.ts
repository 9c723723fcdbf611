/** A Retry-After header (seconds, or an HTTP date) in milliseconds from now; undefined when unreadable. */
export function parseRetryAfter(value: string): number | undefined {
  // Capped: 400 digits would be Infinity, and that would reach a Retry-After header and a JSON report.
  if (/^\d+$/.test(value.trim())) return Math.min(Number(value) * 1000, Number.MAX_SAFE_INTEGER);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

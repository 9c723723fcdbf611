/** A Retry-After header (seconds, or an HTTP date) in milliseconds from now; undefined when unreadable. */
export function parseRetryAfter(value: string): number | undefined {
  // Capped: 400 digits would be Infinity, and that would reach a Retry-After header and a JSON report.
  if (/^\d+$/.test(value.trim())) return Math.min(Number(value) * 1000, Number.MAX_SAFE_INTEGER);
  // An HTTP date starts with its day name (RFC 9110's three forms); anything else ('-5', '1.5') would be read
  // by Date.parse leniently, as some date in 2001 or the year 86400.
  if (!/^\s*[A-Za-z]{3}/.test(value)) return undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** A Retry-After header (seconds, or an HTTP date) in milliseconds from now; undefined when unreadable. */
export function parseRetryAfter(value: string): number | undefined {
  // Sent twice, it arrives joined by fetch ('1, 1'; a date has a comma of its own): the first one counts, as on node:http.
  const seconds = /^\s*(\d+)\s*(?:,|$)/.exec(value)?.[1];
  // Capped: 400 digits would be Infinity, and that would reach a Retry-After header and a JSON report.
  if (seconds !== undefined) return Math.min(Number(seconds) * 1000, Number.MAX_SAFE_INTEGER);
  // An HTTP date starts with its day name (RFC 9110's three forms); anything else ('-5', '1.5') would be read
  // by Date.parse leniently, as some date in 2001 or the year 86400.
  if (!/^\s*[A-Za-z]{3}/.test(value)) return undefined;
  // Two dates joined: the first, an IMF-fixdate of 29 characters ('Sun, 06 Nov 1994 08:49:37 GMT').
  const date = Date.parse(value) || Date.parse(value.trim().slice(0, 29));
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

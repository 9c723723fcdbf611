import type { UpstreamError } from '../core/errors.js';

/** Characters of an answer shown: enough for a JSON error or a proxy's headline, not a whole HTML page. */
const SHOWN = 300;

/**
 * The body of an upstream refusal, for a line under the error: the message alone ("answered HTTP 400") does
 * not say what the service objected to. On one line (whitespace runs as one space), cut past SHOWN characters,
 * and with control characters escaped: an answer must not move the cursor or recolour the operator's terminal.
 * The call's secrets were already redacted from it (callUpstream).
 */
export function upstreamAnswer(error: UpstreamError): string | undefined {
  // Read from its first bytes only: an answer may hold up to 64 MiB, of which 300 characters are shown.
  const head = new TextDecoder().decode(error.body.subarray(0, SHOWN * 4 * 4));
  const characters = [...head.replace(/\s+/g, ' ').trim()];
  if (characters.length === 0) return undefined;
  const cut = characters.length > SHOWN || error.body.byteLength > SHOWN * 4 * 4;
  const shown = escapeControls(characters.slice(0, SHOWN).join(''));
  const type = error.contentType === undefined ? '' : ` (${escapeControls(error.contentType)})`;
  return `It answered${type}: ${shown}${cut ? `… (${error.body.byteLength} bytes)` : ''}`;
}

/**
 * C0 and C1 controls (ESC begins a terminal's escape sequences) and bidirectional marks and overrides (which reorder
 * what is shown), written as JSON escapes; line breaks and tabs stay.
 */
export function escapeControls(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

import type { UpstreamError } from '../core/errors.js';

/** Characters of an answer shown: enough for a JSON error or a proxy's headline, not a whole HTML page. */
const SHOWN = 300;
/** Bytes decoded of an answer (which may hold up to 64 MiB): room for SHOWN characters of four bytes, and runs of spaces. */
const READ = SHOWN * 16;

/**
 * The body of an upstream refusal, for a line under the error: the message alone ("answered HTTP 400") does
 * not say what the service objected to. On one line (whitespace runs as one space), cut past SHOWN characters.
 * The call's secrets were already redacted from it (callUpstream); its control characters are escaped where the
 * CLI writes it, with every message (escapeControls).
 */
export function upstreamAnswer(error: UpstreamError): string | undefined {
  const head = new TextDecoder().decode(error.body.subarray(0, READ));
  const characters = [...head.replace(/\s+/g, ' ').trim()];
  if (characters.length === 0) return undefined;
  const cut = characters.length > SHOWN || error.body.byteLength > READ;
  const type = error.contentType === undefined ? '' : ` (${error.contentType})`;
  return `It answered${type}: ${characters.slice(0, SHOWN).join('')}${cut ? `… (${error.body.byteLength} bytes)` : ''}`;
}

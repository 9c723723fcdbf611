import type { UpstreamError } from '../core/errors.js';
import { answerExcerpt } from '../core/http.js';

/**
 * The body of an upstream refusal, for a line under the error: the message alone ("answered HTTP 400") does
 * not say what the service objected to. Its start, on one line (answerExcerpt, as the library logs it); its
 * control characters are escaped where the CLI writes it, with every message (escapeControls).
 */
export function upstreamAnswer(error: UpstreamError): string | undefined {
  const { text, cut } = answerExcerpt(error);
  if (text === '') return undefined;
  const type = error.contentType === undefined ? '' : ` (${error.contentType})`;
  return `It answered${type}: ${text}${cut ? `… (${error.body.byteLength} bytes)` : ''}`;
}

import { describe, expect, it } from 'vitest';
import { redactBytes } from '../../src/core/redact-bytes.js';

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array) => new TextDecoder().decode(data);

describe('redactBytes', () => {
  it('replaces a secret as sent, JSON-escaped (quotes, backslashes, PHP\'s \\/) and percent-encoded', () => {
    const secret = 'a"b\\c/d e';
    const echoed = [secret, JSON.stringify(secret).slice(1, -1), JSON.stringify(secret).slice(1, -1).replaceAll('/', '\\/'), encodeURIComponent(secret)];
    expect(text(redactBytes(bytes(echoed.join('|')), [secret]))).toBe('[redacted]|[redacted]|[redacted]|[redacted]');
  });

  it('replaces a secret past ASCII written with \\u escapes, as PHP\'s json_encode does, in lower or upper case', () => {
    const secret = 'pä/ß';
    const echoed = ['p\\u00e4\\/\\u00df', 'p\\u00E4/\\u00DF', secret];
    expect(text(redactBytes(bytes(echoed.join('|')), [secret]))).toBe('[redacted]|[redacted]|[redacted]');
  });

  it('returns the same array when no secret occurs, and ignores an empty secret', () => {
    const body = bytes('{"error":"bad"}');
    expect(redactBytes(body, ['sk_live_x', ''])).toBe(body);
  });

  it('replaces every occurrence of each secret and keeps the bytes around them', () => {
    expect(text(redactBytes(bytes('k1 and k1, then k2.'), ['k1', 'k2']))).toBe('[redacted] and [redacted], then [redacted].');
  });
});

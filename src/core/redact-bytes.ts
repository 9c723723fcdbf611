const encoder = new TextEncoder();
const REDACTED = encoder.encode('[redacted]');

/**
 * The bytes with every occurrence of each secret replaced by `[redacted]`; the same array when none
 * occurs. An upstream that echoes the request back in a refusal (a gateway's debug page) must not hand
 * the API key to the browser the refusal is passed on to. Each secret is looked for as it was sent and
 * as an echo writes it: JSON-escaped (PHP's json_encode also writes '/' as '\/') and percent-encoded.
 * Plain Uint8Array: the core also runs where Buffer does not.
 */
export function redactBytes(bytes: Uint8Array, secrets: readonly string[]): Uint8Array {
  let out = bytes;
  for (const secret of secrets) {
    if (secret === '') continue;
    for (const form of echoedForms(secret)) out = replaceAll(out, encoder.encode(form));
  }
  return out;
}

/**
 * The secret as an echo may write it, longest first so a shorter form never cuts into a longer one. JSON's
 * forms come with '/' as it is and as '\\/', and with characters past ASCII as they are and as `\\u00e4`
 * (PHP's json_encode writes both escapes by default; other encoders use upper-case hex).
 */
function echoedForms(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1);
  const escapeNonAscii = (text: string, hex: (code: string) => string) =>
    text.replace(/[^\u0020-\u007e]/g, (char) => `\\u${hex(char.charCodeAt(0).toString(16).padStart(4, '0'))}`);
  const jsonForms = [json, escapeNonAscii(json, (code) => code), escapeNonAscii(json, (code) => code.toUpperCase())];
  const forms = new Set([...jsonForms, ...jsonForms.map((form) => form.replaceAll('/', '\\/')), secret, encodeURIComponent(secret)]);
  return [...forms].sort((a, b) => b.length - a.length);
}

function replaceAll(bytes: Uint8Array, needle: Uint8Array): Uint8Array {
  const parts: Uint8Array[] = [];
  let from = 0;
  for (let at = indexOf(bytes, needle, 0); at !== -1; at = indexOf(bytes, needle, from)) {
    parts.push(bytes.subarray(from, at), REDACTED);
    from = at + needle.length;
  }
  if (parts.length === 0) return bytes;
  parts.push(bytes.subarray(from));
  const out = new Uint8Array(parts.reduce((length, part) => length + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

function indexOf(bytes: Uint8Array, needle: Uint8Array, from: number): number {
  const last = bytes.length - needle.length;
  for (let at = bytes.indexOf(needle[0]!, from); at !== -1 && at <= last; at = bytes.indexOf(needle[0]!, at + 1)) {
    let i = 1;
    while (i < needle.length && bytes[at + i] === needle[i]) i++;
    if (i === needle.length) return at;
  }
  return -1;
}

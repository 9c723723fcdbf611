const encoder = new TextEncoder();
const REDACTED = encoder.encode('[redacted]');

/**
 * The bytes with every occurrence of each secret replaced by `[redacted]`; the same array when none
 * occurs. An upstream that echoes the request back in a refusal (a gateway's debug page) must not hand
 * the API key to the browser the refusal is passed on to. Each character of a secret is recognised as it
 * was sent and as an echo may write it, escapes mixed as encoders mix them: a JSON escape (`\"`, `\/`,
 * `\u002B` in either case: PHP, System.Text.Json and Go each escape other characters), percent-encoding
 * (either case, `+` for a space) and an HTML entity (`&amp;`, `&#43;`, `&#x2b;`).
 * Plain Uint8Array: the core also runs where Buffer does not.
 */
export function redactBytes(bytes: Uint8Array, secrets: readonly string[]): Uint8Array {
  let out = bytes;
  for (const secret of secrets) {
    if (secret !== '') out = redactOne(out, [...secret].map((text) => ({ text, utf8: encoder.encode(text) })));
  }
  return out;
}

/** One character of a secret, with its UTF-8 bytes (encoded once, not at every position tried). */
interface SecretChar {
  text: string;
  utf8: Uint8Array;
}

function redactOne(bytes: Uint8Array, chars: readonly SecretChar[]): Uint8Array {
  const parts: Uint8Array[] = [];
  const first = chars[0]!.utf8[0];
  let from = 0;
  for (let at = 0; at < bytes.length; ) {
    // Most bytes can begin no writing of the secret: only its first byte or an escape's.
    const byte = bytes[at];
    const end = byte === first || byte === BACKSLASH || byte === PERCENT || byte === AMPERSAND || byte === PLUS ? matchSecret(bytes, at, chars) : -1;
    if (end === -1) {
      at++;
      continue;
    }
    parts.push(bytes.subarray(from, at), REDACTED);
    from = at = end;
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

/**
 * Where the secret written from `at` ends, or -1 when it is not written there. A character may be there both as
 * itself and as the start of an escape (a backslash, in JSON's escape of a backslash): the other reading is tried when one leads nowhere.
 */
function matchSecret(bytes: Uint8Array, at: number, chars: readonly SecretChar[], k = 0): number {
  if (k === chars.length) return at;
  const char = chars[k]!;
  if (startsWith(bytes, at, char.utf8)) {
    const end = matchSecret(bytes, at + char.utf8.length, chars, k + 1);
    if (end !== -1) return end;
  }
  const escaped = matchEscaped(bytes, at, char);
  return escaped === -1 ? -1 : matchSecret(bytes, escaped, chars, k + 1);
}

const BACKSLASH = 0x5c;
const PERCENT = 0x25;
const AMPERSAND = 0x26;
const PLUS = 0x2b;
const JSON_SHORT_ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const NAMED_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** Where one character of the secret, escaped in one of the ways above, ends from `i`; -1 when it is not there. */
function matchEscaped(bytes: Uint8Array, i: number, { text, utf8 }: SecretChar): number {
  switch (bytes[i]) {
    case BACKSLASH:
      return matchJsonEscape(bytes, i, text);
    case PERCENT:
      return matchPercent(bytes, i, utf8);
    case AMPERSAND:
      return matchEntity(bytes, i, text);
    case PLUS:
      return text === ' ' ? i + 1 : -1;
    default:
      return -1;
  }
}

/** `\"`-style or `\uXXXX` escapes (two of them for a character past U+FFFF). */
function matchJsonEscape(bytes: Uint8Array, i: number, char: string): number {
  const short = JSON_SHORT_ESCAPES[String.fromCharCode(bytes[i + 1] ?? 0)];
  if (short !== undefined) return short === char ? i + 2 : -1;
  for (let unit = 0; unit < char.length; unit++) {
    if (bytes[i] !== BACKSLASH || bytes[i + 1] !== 0x75 /* u */) return -1;
    if (hexValue(bytes, i + 2, 4) !== char.charCodeAt(unit)) return -1;
    i += 6;
  }
  return i;
}

/** Each UTF-8 byte of the character as `%XX`, in either case. */
function matchPercent(bytes: Uint8Array, i: number, utf8: Uint8Array): number {
  for (const byte of utf8) {
    if (bytes[i] !== PERCENT || hexValue(bytes, i + 1, 2) !== byte) return -1;
    i += 3;
  }
  return i;
}

/** `&amp;`, `&#43;` or `&#x2B;`. */
function matchEntity(bytes: Uint8Array, i: number, char: string): number {
  // Looked for within the longest entity that can name a character (`&#x10FFFF;`), never further: a body with
  // many '&' and no ';' must not be scanned to its end from each of them.
  const semicolon = bytes.subarray(i + 1, i + 11).indexOf(0x3b) + i + 1;
  if (semicolon === i) return -1;
  const name = String.fromCharCode(...bytes.subarray(i + 1, semicolon));
  const numeric = /^#(?:x([0-9a-f]+)|([0-9]+))$/i.exec(name);
  const named = NAMED_ENTITIES[name];
  const value = numeric ? String.fromCodePoint(Math.min(0x10ffff, numeric[1] ? parseInt(numeric[1], 16) : Number(numeric[2]))) : named;
  return value === char ? semicolon + 1 : -1;
}

function startsWith(bytes: Uint8Array, i: number, needle: Uint8Array): boolean {
  if (i + needle.length > bytes.length) return false;
  for (let k = 0; k < needle.length; k++) if (bytes[i + k] !== needle[k]) return false;
  return true;
}

/** The value of `digits` hex digits (either case) at `i`, or -1 when they are not all hex. */
function hexValue(bytes: Uint8Array, i: number, digits: number): number {
  let value = 0;
  for (let k = 0; k < digits; k++) {
    const c = bytes[i + k];
    const digit = c === undefined ? -1 : c >= 0x30 && c <= 0x39 ? c - 0x30 : (c | 0x20) >= 0x61 && (c | 0x20) <= 0x66 ? (c | 0x20) - 0x57 : -1;
    if (digit === -1) return -1;
    value = value * 16 + digit;
  }
  return value;
}

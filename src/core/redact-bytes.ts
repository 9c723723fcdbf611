const encoder = new TextEncoder();
const REDACTED = encoder.encode('[redacted]');

/**
 * The bytes with every occurrence of each secret replaced by `[redacted]`; the same array when none
 * occurs. An upstream that echoes the request back in a refusal (a gateway's debug page) must not hand
 * the API key to the browser the refusal is passed on to. Each character of a secret is recognised as it
 * was sent and as an echo may write it, escapes mixed as encoders mix them: a JSON escape (`\"`, `\/`,
 * `\u002B` in either case: PHP, System.Text.Json and Go each escape other characters), percent-encoding
 * (either case, `+` for a space) and an HTML entity (`&amp;`, `&lowbar;`, `&#43;`, `&#x2b;`); and escaped twice, as
 * an echo of an echo writes it (JSON in JSON, a URL encoded again, an entity quoted as HTML).
 * Plain Uint8Array: the core also runs where Buffer does not.
 */
export function redactBytes(bytes: Uint8Array, secrets: readonly string[]): Uint8Array {
  let out = bytes;
  for (const secret of secrets) {
    if (secret !== '') out = redactOne(out, [...secret].map((text) => ({ text, utf8: encoder.encode(text) })));
  }
  return out;
}

/** The same for text: the text itself when no secret occurs in it. */
export function redactText(text: string, secrets: readonly string[]): string {
  if (secrets.length === 0) return text;
  const bytes = encoder.encode(text);
  const redacted = redactBytes(bytes, secrets);
  return redacted === bytes ? text : new TextDecoder().decode(redacted);
}

/** One character of a secret, with its UTF-8 bytes (encoded once, not at every position tried). */
interface SecretChar {
  text: string;
  utf8: Uint8Array;
}

function redactOne(bytes: Uint8Array, chars: readonly SecretChar[]): Uint8Array {
  const match: Match = { bytes, chars, failed: new Set(), steps: MAX_STEPS_BASE + MAX_STEPS_PER_BYTE * bytes.length };
  try {
    return replaceMatches(match);
  } catch (error) {
    // A body the search could not finish within its steps is not passed on in any part: it may hold the secret.
    if (error === SEARCH_TOO_LONG) return REDACTED;
    throw error;
  }
}

/**
 * Steps a search may take: far above what an echo of a secret costs (a few per byte of the body), and a bound on
 * one built to be slow, such as a near miss of a long secret at every position (the body is then withheld whole).
 */
const MAX_STEPS_BASE = 1_000_000;
const MAX_STEPS_PER_BYTE = 16;
const SEARCH_TOO_LONG = Symbol('paywidget.searchTooLong');

function replaceMatches(match: Match): Uint8Array {
  const { bytes, chars } = match;
  const parts: Uint8Array[] = [];
  const first = chars[0]!.utf8[0];
  let from = 0;
  for (let at = 0; at < bytes.length; ) {
    // Most bytes can begin no writing of the secret: only its first byte or an escape's.
    const byte = bytes[at];
    const end = byte === first || byte === BACKSLASH || byte === PERCENT || byte === AMPERSAND || byte === PLUS ? matchSecret(match, at, 0) : -1;
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

/** One search for one secret in one body. */
interface Match {
  bytes: Uint8Array;
  chars: readonly SecretChar[];
  /** (position, character) pairs at an escape's lead that led nowhere; elsewhere there is one reading only. */
  failed: Set<number>;
  /** Steps left. */
  steps: number;
}

/**
 * Where the secret written from `at` on, from its character `k`, ends; -1 when it is not written there. A character may
 * be there both as itself and as the start of an escape (a backslash, in JSON's escape of a backslash), or escaped once
 * and twice: the other readings are tried when one leads nowhere. Each (position, character) that led nowhere is
 * remembered: without that, a secret of backslashes against a run of backslashes is tried in 3^n ways, and a token a
 * browser sends, quoted in part by the service, would hold the event loop for minutes.
 */
function matchSecret(match: Match, at: number, k: number): number {
  const { bytes, chars, failed } = match;
  if (k === chars.length) return at;
  if (--match.steps < 0) throw SEARCH_TOO_LONG;
  const lead = bytes[at];
  const branches = lead === BACKSLASH || lead === PERCENT || lead === AMPERSAND || lead === PLUS;
  const state = at * (chars.length + 1) + k;
  if (branches && failed.has(state)) return -1;
  const char = chars[k]!;
  let end = -1;
  if (startsWith(bytes, at, char.utf8)) end = matchSecret(match, at + char.utf8.length, k + 1);
  if (end === -1) {
    const once = matchEscaped(bytes, at, char, false);
    if (once !== -1) end = matchSecret(match, once, k + 1);
  }
  if (end === -1) {
    const twice = matchEscaped(bytes, at, char, true);
    if (twice !== -1) end = matchSecret(match, twice, k + 1);
  }
  if (end === -1 && branches) failed.add(state);
  return end;
}

const BACKSLASH = 0x5c;
const PERCENT = 0x25;
const AMPERSAND = 0x26;
const PLUS = 0x2b;
const JSON_SHORT_ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
/** HTML's named references for ASCII characters (HTML5 names every punctuation mark: PHP's ENT_HTML5 writes `&lowbar;`). */
const NAMED_ENTITIES: Record<string, string> = {
  amp: '&', AMP: '&', lt: '<', LT: '<', gt: '>', GT: '>', quot: '"', QUOT: '"', apos: "'", excl: '!', num: '#', dollar: '$',
  percnt: '%', lpar: '(', rpar: ')', ast: '*', midast: '*', plus: '+', comma: ',', period: '.', sol: '/', colon: ':',
  semi: ';', equals: '=', quest: '?', commat: '@', lsqb: '[', lbrack: '[', bsol: '\\', rsqb: ']', rbrack: ']', Hat: '^',
  lowbar: '_', UnderBar: '_', grave: '`', DiacriticalGrave: '`', lcub: '{', lbrace: '{', verbar: '|', vert: '|',
  VerticalLine: '|', rcub: '}', rbrace: '}', Tab: '\t', NewLine: '\n',
};
/** The longest entity looked for after an '&': `&#x10FFFF;`, or the longest name. */
const LONGEST_ENTITY = Math.max('#x10FFFF'.length, ...Object.keys(NAMED_ENTITIES).map((name) => name.length)) + 1;

/**
 * Where one character of the secret, escaped in one of the ways above, ends from `i`; -1 when it is not there.
 * Also escaped twice over, the escape's own lead written escaped, as an echo of an echo writes it: JSON in JSON
 * (`\\\"`, `\\u002B`), a percent-encoded URL encoded again (`%252F`), an entity in HTML quoted as HTML (`&amp;#43;`).
 */
function matchEscaped(bytes: Uint8Array, i: number, { text, utf8 }: SecretChar, twice: boolean): number {
  switch (bytes[i]) {
    case BACKSLASH:
      return matchJsonEscape(bytes, i, text, twice);
    case PERCENT:
      return matchPercent(bytes, i, utf8, twice ? PERCENT_OF_PERCENT : PERCENT_ONLY);
    case AMPERSAND:
      return matchEntity(bytes, i, text, twice ? AMP_ENTITY : AMPERSAND_ONLY);
    case PLUS:
      return text === ' ' && !twice ? i + 1 : -1;
    default:
      return -1;
  }
}

/** What each escape begins with, and begins with written once more in its own kind (JSON in JSON, a URL encoded again, HTML quoted as HTML). */
const BACKSLASH_ONLY = encoder.encode('\\');
const BACKSLASH_TWICE = encoder.encode('\\\\');
const PERCENT_ONLY = encoder.encode('%');
const PERCENT_OF_PERCENT = encoder.encode('%25');
const AMPERSAND_ONLY = encoder.encode('&');
const AMP_ENTITY = encoder.encode('&amp;');
const U = 0x75;

/**
 * `\"`-style or `\uXXXX` escapes (two of them for a character past U+FFFF). Written in JSON again (`twice`), each
 * begins with a doubled backslash, and a short escape's own character is escaped where JSON escapes it: `\\\"`,
 * `\\\\`, PHP's `\\\/`, but `\\n`.
 */
function matchJsonEscape(bytes: Uint8Array, i: number, char: string, twice: boolean): number {
  const lead = twice ? BACKSLASH_TWICE : BACKSLASH_ONLY;
  if (!startsWith(bytes, i, lead)) return -1;
  if (bytes[i + lead.length] === U) {
    for (let unit = 0; unit < char.length; unit++) {
      if (!startsWith(bytes, i, lead) || bytes[i + lead.length] !== U || hexValue(bytes, i + lead.length + 1, 4) !== char.charCodeAt(unit)) return -1;
      i += lead.length + 5;
    }
    return i;
  }
  let at = i + lead.length;
  let short = String.fromCharCode(bytes[at] ?? 0);
  if (twice && short === '\\') {
    short = String.fromCharCode(bytes[++at] ?? 0);
    if (!'"\\/'.includes(short)) return -1;
  } else if (twice && short === '"') {
    return -1; // a quote after a doubled backslash ends the string
  }
  return JSON_SHORT_ESCAPES[short] === char ? at + 1 : -1;
}

/** Each UTF-8 byte of the character as `%XX`, in either case; with `lead` `%25`, as `%25XX` (encoded twice). */
function matchPercent(bytes: Uint8Array, i: number, utf8: Uint8Array, lead: Uint8Array): number {
  for (const byte of utf8) {
    if (!startsWith(bytes, i, lead) || hexValue(bytes, i + lead.length, 2) !== byte) return -1;
    i += lead.length + 2;
  }
  return i;
}

/** `&amp;`, `&lowbar;`, `&#43;` or `&#x2B;`, its '&' written as `lead` (`&amp;` when quoted as HTML again). */
function matchEntity(bytes: Uint8Array, i: number, char: string, lead: Uint8Array): number {
  if (!startsWith(bytes, i, lead)) return -1;
  const start = i + lead.length;
  // Looked for within the longest entity that can name a character, never further: a body with
  // many '&' and no ';' must not be scanned to its end from each of them.
  const semicolon = bytes.subarray(start, start + LONGEST_ENTITY).indexOf(0x3b) + start;
  if (semicolon === start - 1) return -1;
  const name = String.fromCharCode(...bytes.subarray(start, semicolon));
  const numeric = /^#(?:x([0-9a-f]+)|([0-9]+))$/i.exec(name);
  const named = Object.hasOwn(NAMED_ENTITIES, name) ? NAMED_ENTITIES[name] : undefined;
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

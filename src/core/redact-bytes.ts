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
    // A body the search could not finish within its steps, or its stack (one frame a character of a secret of
    // thousands), is not passed on in any part: it may hold the secret.
    if (error === SEARCH_TOO_LONG || error instanceof RangeError) return REDACTED;
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
    const end = byte === first || isEscapeLead(byte) ? matchSecret(match, at, 0) : -1;
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
  const branches = isEscapeLead(bytes[at]);
  const state = at * (chars.length + 1) + k;
  if (branches && failed.has(state)) return -1;
  const char = chars[k]!;
  // Each reading of the character, in turn, until one leads on to the end of the secret: as itself, escaped once,
  // escaped twice by JSON, percent-encoding or HTML (a reading that ends where an earlier one did adds nothing).
  let end = -1;
  const tried: number[] = [];
  for (let reading = 0; reading < READINGS && end === -1; reading++) {
    const next = readCharacter(bytes, at, char, reading);
    if (next === -1 || tried.includes(next)) continue;
    tried.push(next);
    end = matchSecret(match, next, k + 1);
  }
  if (end === -1 && branches) failed.add(state);
  return end;
}

const BACKSLASH = 0x5c;
const PERCENT = 0x25;
const AMPERSAND = 0x26;
const PLUS = 0x2b;

/** A byte an escape begins with: only there can a character be read more than one way. */
function isEscapeLead(byte: number | undefined): boolean {
  return byte === BACKSLASH || byte === PERCENT || byte === AMPERSAND || byte === PLUS;
}
/** JSON's short escapes: the letter after the backslash, and the character it stands for. */
const JSON_SHORT_ESCAPES: readonly (readonly [string, string])[] = [['"', '"'], ['\\', '\\'], ['/', '/'], ['b', '\b'], ['f', '\f'], ['n', '\n'], ['r', '\r'], ['t', '\t']];
const QUOTE = 0x22;
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

const READINGS = 5;

/**
 * Where one character of the secret ends from `i` in one reading (-1 when it is not written so there): 0 as itself,
 * 1 escaped once in one of the ways above, 2 to 4 escaped twice over, as an echo of an echo writes it, each character
 * of the escape itself written escaped where the second writer escapes it, in its own kind or another: JSON in JSON
 * (`\\\"`, `\\u002B`) or JSON put in a URL (`%5C%2F`) or in HTML (`\&quot;`); a URL encoded again (`%252F`); an
 * entity quoted as HTML (`&amp;#43;`), put in a URL (`%26%2343%3B`) or in JSON (`\u0026amp;`).
 */
function readCharacter(bytes: Uint8Array, i: number, { text, utf8 }: SecretChar, reading: number): number {
  switch (reading) {
    case 0:
      return startsWith(bytes, i, utf8) ? i + utf8.length : -1;
    case 1:
      switch (bytes[i]) {
        case BACKSLASH:
          return matchJsonEscape(bytes, i, text, false);
        case PERCENT:
          return matchPercent(bytes, i, utf8, false);
        case AMPERSAND:
          return matchEntity(bytes, i, text, false);
        case PLUS:
          return text === ' ' ? i + 1 : -1;
        default:
          return -1;
      }
    case 2:
      return matchJsonEscape(bytes, i, text, true);
    case 3:
      return matchPercent(bytes, i, utf8, true);
    default:
      return matchEntity(bytes, i, text, true);
  }
}

/**
 * Where the ASCII character `char` of an escape ends from `i`: as itself, or (`twice`) also as a second writer
 * escapes it, tried first: JSON (`\"`, `\\`, `\/`, `\u0025`), percent (`%25`) or an entity (`&amp;`, `&#37;`).
 */
function syntax(bytes: Uint8Array, i: number, char: string, twice: boolean): number {
  if (twice) {
    const code = char.charCodeAt(0);
    const lead = bytes[i];
    if (lead === BACKSLASH) {
      if (bytes[i + 1] === code && '"\\/'.includes(char)) return i + 2;
      if (bytes[i + 1] === U && hexValue(bytes, i + 2, 4) === code) return i + 6;
    } else if (lead === PERCENT) {
      if (hexValue(bytes, i + 1, 2) === code) return i + 3;
    } else if (lead === AMPERSAND) {
      const end = entityAt(bytes, i + 1, false);
      if (end !== undefined && end.value === char) return end.end;
    }
  }
  return bytes[i] === char.charCodeAt(0) ? i + 1 : -1;
}

const U = 0x75;

/**
 * `\"`-style or `\uXXXX` escapes (two of them for a character past U+FFFF). Escaped again (`twice`), a quote after
 * a doubled backslash is no echo: in JSON in JSON it ends the string.
 */
function matchJsonEscape(bytes: Uint8Array, i: number, char: string, twice: boolean): number {
  let at = syntax(bytes, i, '\\', twice);
  if (at === -1) return -1;
  const leadDoubled = twice && at === i + 2 && bytes[i + 1] === BACKSLASH;
  if (bytes[at] === U) {
    for (let unit = 0; unit < char.length; unit++) {
      if (unit > 0 && (at = syntax(bytes, at, '\\', twice)) === -1) return -1;
      if (bytes[at] !== U || hexValue(bytes, at + 1, 4) !== char.charCodeAt(unit)) return -1;
      at += 5;
    }
    return at;
  }
  for (const [short, value] of JSON_SHORT_ESCAPES) {
    if (value !== char) continue;
    if (leadDoubled && short === '"' && bytes[at] === QUOTE) return -1;
    const end = syntax(bytes, at, short, twice);
    if (end !== -1) return end;
  }
  return -1;
}

/** Each UTF-8 byte of the character as `%XX`, in either case; escaped again, its '%' as `%25`, `\u0025` or `&percnt;`. */
function matchPercent(bytes: Uint8Array, i: number, utf8: Uint8Array, twice: boolean): number {
  for (const byte of utf8) {
    i = syntax(bytes, i, '%', twice);
    if (i === -1 || hexValue(bytes, i, 2) !== byte) return -1;
    i += 2;
  }
  return i;
}

/** `&amp;`, `&lowbar;`, `&#43;` or `&#x2B;`; escaped again, its '&', '#' and ';' as another writer escapes them. */
function matchEntity(bytes: Uint8Array, i: number, char: string, twice: boolean): number {
  const start = syntax(bytes, i, '&', twice);
  if (start === -1) return -1;
  const entity = entityAt(bytes, start, twice);
  return entity !== undefined && entity.value === char ? entity.end : -1;
}

/**
 * The character an entity names, its name starting at `i` (after the '&'), and where it ends. Looked for within the
 * longest entity that can name a character, never further: a body with many '&' and no ';' must not be scanned to its
 * end from each of them.
 */
function entityAt(bytes: Uint8Array, i: number, twice: boolean): { value: string | undefined; end: number } | undefined {
  let at = syntax(bytes, i, '#', twice);
  const numeric = at !== -1;
  if (!numeric) at = i;
  const nameStart = at;
  while (at - nameStart < LONGEST_ENTITY && isAlphanumeric(bytes[at])) at++;
  const name = String.fromCharCode(...bytes.subarray(nameStart, at));
  const end = syntax(bytes, at, ';', twice);
  if (end === -1 || name === '') return undefined;
  if (!numeric) return { value: Object.hasOwn(NAMED_ENTITIES, name) ? NAMED_ENTITIES[name] : undefined, end };
  const number = /^(?:[xX]([0-9a-fA-F]+)|([0-9]+))$/.exec(name);
  if (!number) return undefined;
  return { value: String.fromCodePoint(Math.min(0x10ffff, number[1] ? parseInt(number[1], 16) : Number(number[2]))), end };
}

function isAlphanumeric(byte: number | undefined): boolean {
  return byte !== undefined && ((byte >= 0x30 && byte <= 0x39) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7a));
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

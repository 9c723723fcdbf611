/**
 * Where each order of a search answer lies in its bytes, found without parsing them, so that a page's
 * orders can be parsed one at a time as they are handed over.
 *
 * Why: parsed at once, a page of 100 orders is about 1.5 MB of objects alive together. V8 grows its young
 * generation once enough has survived its scavenges (to 32 MB on Node 20, 128 MB on Node 24), and a larger
 * young generation is collected less often, which also leaves the socket's buffers of every page read
 * meanwhile (twice the page's bytes) waiting longer to be freed. Parsed one by one, an order is garbage
 * before the next scavenge: with the pages read into reused buffers (BodyBuffers), a 100,000-order sync
 * peaked at 115–119 MB instead of 151–155 (bench/order-sync.ts). The scan costs about 0.7 ms a page;
 * small strings parse a little faster than one of half a megabyte, which pays back part of it.
 *
 * Only the structure is read here: what lies between the places is left to JSON.parse, and any answer
 * of another shape is reported as such (undefined), for the caller to parse whole.
 */

/** The orders of an answer `{ …, "items": [ {…}, {…} ], … }`, and the answer without them. */
export interface OrderPlaces {
  /** Each order's first byte and the byte after its last. */
  starts: number[];
  ends: number[];
  /** Each order's entity_id, read from its bytes. */
  ids: number[];
  /** The bytes before the orders (up to the `[`) and from the `]` on: the answer with `"items": []`. */
  beforeItems: number;
  afterItems: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const ZERO = 0x30;
const NINE = 0x39;
const ITEMS = [...'"items"'].map((c) => c.charCodeAt(0));
const ENTITY_ID = [...'"entity_id"'].map((c) => c.charCodeAt(0));

/** The places of an answer's orders, or undefined when it is not an object with one `items` array of objects, each with one integer `entity_id`. */
export function placeOrders(bytes: Uint8Array): OrderPlaces | undefined {
  const scan = new Scanner(bytes);
  const places: OrderPlaces = { starts: [], ends: [], ids: [], beforeItems: -1, afterItems: -1 };
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) scan.at = 3; // a BOM, which TextDecoder drops
  if (!scan.members((key, keyEnd) => (scan.is(key, keyEnd, ITEMS) ? places.beforeItems === -1 && scan.orders(places) : scan.value()))) return undefined;
  scan.space();
  return places.beforeItems !== -1 && scan.at === bytes.length ? places : undefined;
}

class Scanner {
  at = 0;
  constructor(private readonly bytes: Uint8Array) {}

  space(): void {
    this.at = pastSpace(this.bytes, this.at);
  }

  /** An object, calling `member` at each value with where its key (quotes included) lies; false when the structure is not an object's. */
  members(member: (key: number, keyEnd: number) => boolean): boolean {
    const b = this.bytes;
    this.space();
    if (b[this.at] !== OPEN_BRACE) return false;
    this.at += 1;
    this.space();
    if (b[this.at] === CLOSE_BRACE) {
      this.at += 1;
      return true;
    }
    for (;;) {
      const key = this.at;
      if (b[key] !== QUOTE || !this.string()) return false;
      const keyEnd = this.at;
      this.space();
      if (b[this.at] !== COLON) return false;
      this.at += 1;
      this.space();
      if (!member(key, keyEnd)) return false;
      this.space();
      const c = b[this.at++];
      if (c === CLOSE_BRACE) return true;
      if (c !== COMMA) return false;
      this.space();
    }
  }

  /** The `items` array: each element an order object, whose place and entity_id are kept. */
  orders(places: OrderPlaces): boolean {
    if (this.bytes[this.at] !== OPEN_BRACKET) return false;
    places.beforeItems = this.at + 1;
    const end = scanOrders(this.bytes, this.at + 1, places);
    if (end === -1) return false;
    places.afterItems = end;
    this.at = end + 1;
    return true;
  }

  /** Whether the string from `key` to `keyEnd` (quotes included) is `expected`, written without escapes. */
  is(key: number, keyEnd: number, expected: number[]): boolean {
    return keyEnd - key === expected.length && bytesAre(this.bytes, key, expected);
  }

  /** The string whose opening quote is at `at`. */
  string(): boolean {
    const end = closingQuote(this.bytes, this.at);
    if (end === -1) return false;
    this.at = end + 1;
    return true;
  }

  /** Past any value: objects and arrays by their brackets, strings by their quotes, the rest up to a delimiter. */
  value(): boolean {
    const b = this.bytes;
    const first = b[this.at];
    if (first === QUOTE) return this.string();
    if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
      let i = this.at;
      for (let c = b[i]; c !== undefined && c !== COMMA && c !== CLOSE_BRACE && c !== CLOSE_BRACKET && c > 0x20; c = b[++i]);
      if (i === this.at) return false;
      this.at = i;
      return true;
    }
    let depth = 0;
    for (let i = this.at; i < b.length; i++) {
      const c = b[i];
      if (c === QUOTE) {
        i = closingQuote(b, i);
        if (i === -1) return false;
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        depth++;
      } else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === 0) {
        this.at = i + 1;
        return true;
      }
    }
    return false;
  }
}

/**
 * One pass over the orders of an `items` array from `i` (after its `[`): where each begins and ends, and its
 * entity_id (a key of the order itself, not of an address inside it). Returns the index of the closing `]`, or -1.
 * A single loop, since it reads every byte of the page: strings are skipped whole, and only a string right
 * inside an order, where a key is due, is compared with "entity_id".
 */
function scanOrders(b: Uint8Array, i: number, places: OrderPlaces): number {
  const n = b.length;
  /** 0 between orders, 1 inside an order, 2 and on inside its values. */
  let depth = 0;
  /** Between orders: whether one must come next (after `[` or `,`) rather than `,` or `]`. */
  let orderDue = true;
  /** Inside an order: whether the next string is a key. */
  let keyDue = false;
  let start = 0;
  let id = 0;
  for (; i < n; i++) {
    const c = b[i]!;
    if (c === QUOTE) {
      if (depth === 0) return -1; // a string among the orders
      const from = i;
      // closingQuote, written out: called here, once a string, the scan of a sandbox page took 0.8 ms instead of 0.6.
      for (i++; i < n; i++) {
        const d = b[i]!;
        if (d <= BACKSLASH && (d === QUOTE || d === BACKSLASH)) {
          if (d === QUOTE) break;
          i++;
        }
      }
      if (depth === 1 && keyDue) {
        keyDue = false;
        if (i + 1 - from === ENTITY_ID.length && bytesAre(b, from, ENTITY_ID)) {
          const colon = pastSpace(b, i + 1);
          if (b[colon] !== COLON || id !== 0) return -1;
          id = integerAt(b, pastSpace(b, colon + 1));
          if (id === 0) return -1;
        }
      }
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (depth === 0) {
        if (c !== OPEN_BRACE || !orderDue) return -1;
        orderDue = false;
        start = i;
        id = 0;
        keyDue = true;
      }
      depth++;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (depth === 0) return c === CLOSE_BRACKET && (!orderDue || places.starts.length === 0) ? i : -1;
      if (--depth === 0) {
        if (id === 0) return -1;
        places.starts.push(start);
        places.ends.push(i + 1);
        places.ids.push(id);
      }
    } else if (c === COMMA) {
      if (depth === 1) keyDue = true;
      else if (depth === 0) {
        if (orderDue) return -1;
        orderDue = true;
      }
    } else if (depth === 0 && !isSpace(c)) {
      return -1;
    }
  }
  return -1;
}

/** JSON's whitespace: space, line feed, carriage return, tab. */
const isSpace = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function pastSpace(b: Uint8Array, i: number): number {
  while (isSpace(b[i])) i++;
  return i;
}

/** Where the string whose opening quote is at `i` closes, or -1 when it does not. */
function closingQuote(b: Uint8Array, i: number): number {
  for (i++; i < b.length; i++) {
    const c = b[i]!;
    // One comparison for most bytes: the quote and the backslash are the only ones that matter, both at most 0x5c.
    if (c <= BACKSLASH && (c === QUOTE || c === BACKSLASH)) {
      if (c === QUOTE) return i;
      i++;
    }
  }
  return -1;
}

function bytesAre(b: Uint8Array, at: number, expected: number[]): boolean {
  for (let k = 0; k < expected.length; k++) if (b[at + k] !== expected[k]) return false;
  return true;
}

/** The positive integer written at `i` as digits alone, if JavaScript holds it exactly (as an entity_id is written); 0 for anything else. */
function integerAt(b: Uint8Array, i: number): number {
  const first = i;
  if (b[i]! < ZERO + 1 || b[i]! > NINE) return 0;
  let n = 0;
  for (let c = b[i]!; c >= ZERO && c <= NINE; c = b[++i]!) n = n * 10 + (c - ZERO);
  const next = b[i];
  return i - first > 16 || !Number.isSafeInteger(n) || next === 0x2e || next === 0x65 || next === 0x45 ? 0 : n;
}

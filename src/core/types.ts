/** Headers as any runtime hands them over: Node's incoming headers, a Fetch `Headers`, or a plain record. */
export type HeaderInput = Headers | Record<string, string | string[] | undefined>;

/** The adapter a request came through, so an error can name the fix in that framework. */
export type Framework = 'express' | 'koa' | 'next-pages' | 'next-app';

/** What the core router takes: a plain object, cheaper than a Fetch Request (see DESIGN.md). */
export interface PayRequest {
  method: string;
  /** Path relative to where the app mounted the library, e.g. `/widget-token`. */
  path: string;
  query?: URLSearchParams;
  headers: HeaderInput;
  /** The body exactly as received. Required for webhooks; JSON routes may use `parsedBody` instead. */
  rawBody?: Uint8Array | string;
  /** A body some parser already turned into an object (express.json(), Next's bodyParser). */
  parsedBody?: unknown;
  /** The body was read before the library got it and nothing kept it (a Fetch Request's `bodyUsed`). */
  bodyUsed?: boolean;
  /** The adapter that built the request, so an error names the fix in that framework. */
  framework?: Framework | undefined;
}

/** What the core router answers. `body` is sent as it is. */
export interface PayResponse {
  status: number;
  headers: Record<string, string>;
  body: string | Uint8Array;
}

/** A pino-compatible logger; the library never passes it a secret. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

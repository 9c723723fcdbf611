/** Headers as any runtime hands them over: Node's incoming headers, a Fetch `Headers`, or a plain record. */
export type HeaderInput = Headers | Record<string, string | string[] | undefined>;

/** The adapter a request came through, so an error can name the fix in that framework. */
export type Framework = 'express' | 'koa' | 'next-pages' | 'next-app';

/** What the core router takes: a plain object. Building a Fetch Request per delivery would cost more than the whole webhook route. */
export interface PayRequest {
  /** The HTTP method, upper case as Node gives it. */
  method: string;
  /** Path relative to where the app mounted the library, e.g. `/widget-token`. */
  path: string;
  /**
   * The query string, for your hooks, when your own adapter passes it; the library's routes read none, and
   * its adapters do not set it: read the query from `native` (`req.query`, `ctx.query`, `request.url`).
   */
  query?: URLSearchParams;
  /** The request headers; names are matched case-insensitively. */
  headers: HeaderInput;
  /** The body exactly as received. Required for webhooks; JSON routes may use `parsedBody` instead. */
  rawBody?: Uint8Array | string;
  /** A body some parser already turned into an object (express.json(), Next's bodyParser). */
  parsedBody?: unknown;
  /** The body was read before the library got it and nothing kept it (a Fetch Request's `bodyUsed`, or a Node stream the app read). */
  bodyUsed?: boolean;
  /** The adapter that built the request, so an error names the fix in that framework. */
  framework?: Framework | undefined;
  /**
   * The framework's own request, for your hooks: Express's `req`, Koa's `ctx`, the App Router's `Request`,
   * the Pages Router's `req`. Read a session, `req.user` or a param of the mount path (`/shops/:shop/pay`) from it.
   */
  native?: unknown;
  /** Aborts when the client goes away before its answer is sent: a route's long work (polling) stops then. */
  signal?: AbortSignal | undefined;
}

/** What the core router answers. `body` is sent as it is. */
export interface PayResponse {
  /** The HTTP status to answer with. */
  status: number;
  /** Headers to set, lower-case names. */
  headers: Record<string, string>;
  /** The body to send: JSON text, or an upstream's body byte for byte. */
  body: string | Uint8Array;
}

/** A pino-compatible logger; the library never passes it a secret. */
export interface Logger {
  /** Each step of a request or call, with its ids; usually off in production. */
  debug(obj: object, msg?: string): void;
  /** What happened: a token minted, an admin token obtained, a sync finished. */
  info(obj: object, msg?: string): void;
  /** What someone should look at: an upstream refusal, a store fallback, a sync stopped by an error. */
  warn(obj: object, msg?: string): void;
  /** What failed: a webhook handler that threw, a store that failed, a route that answered 5xx. */
  error(obj: object, msg?: string): void;
}

const inspectCustom = Symbol.for('nodejs.util.inspect.custom');
/** What the edge runtime's console (Next.js middleware and edge routes) calls instead of Node's util.inspect. */
const edgeInspectCustom = Symbol.for('edge-runtime.inspect.custom');

/**
 * A minted widget token. The token goes to the page that mounts the widget and nowhere else:
 * `JSON.stringify`, `util.inspect` and the edge runtime's console hide it, so logging the result is safe.
 * Read `widgetToken` explicitly to hand it to the browser.
 */
export class WidgetToken {
  // Private, behind a getter: a formatter that lists an object's own properties (the edge runtime's) finds none holding it.
  readonly #widgetToken: string;
  /** When the service stops accepting it; mint a new one for a shopper who comes back later. */
  readonly expiresAt: Date;

  constructor(widgetToken: string, expiresAt: Date) {
    this.#widgetToken = widgetToken;
    this.expiresAt = expiresAt;
  }

  /** The token itself: hand it to the page that mounts the widget, nowhere else. */
  get widgetToken(): string {
    return this.#widgetToken;
  }

  /** `{ widgetToken: '[redacted]', expiresAt }`: what logs and `JSON.stringify` see. */
  toJSON(): Record<string, string> {
    return { widgetToken: '[redacted]', expiresAt: this.expiresAt.toISOString() };
  }

  [inspectCustom](): string {
    return `WidgetToken { widgetToken: '[redacted]', expiresAt: ${this.expiresAt.toISOString()} }`;
  }

  [edgeInspectCustom](): Record<string, string> {
    return this.toJSON();
  }
}

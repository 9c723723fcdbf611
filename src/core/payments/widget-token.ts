const inspectCustom = Symbol.for('nodejs.util.inspect.custom');

/**
 * A minted widget token. The token goes to the page that mounts the widget and nowhere else:
 * `JSON.stringify` and `util.inspect` of this object hide it, so logging the result is safe.
 * Read `widgetToken` explicitly to hand it to the browser.
 */
export class WidgetToken {
  /** The token itself: hand it to the page that mounts the widget, nowhere else. */
  readonly widgetToken: string;
  /** When the service stops accepting it; mint a new one for a shopper who comes back later. */
  readonly expiresAt: Date;

  constructor(widgetToken: string, expiresAt: Date) {
    this.widgetToken = widgetToken;
    this.expiresAt = expiresAt;
  }

  /** `{ widgetToken: '[redacted]', expiresAt }`: what logs and `JSON.stringify` see. */
  toJSON(): Record<string, string> {
    return { widgetToken: '[redacted]', expiresAt: this.expiresAt.toISOString() };
  }

  [inspectCustom](): string {
    return `WidgetToken { widgetToken: '[redacted]', expiresAt: ${this.expiresAt.toISOString()} }`;
  }
}

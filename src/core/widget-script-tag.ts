import { PayError } from './errors.js';

/** Where the widget host serves the loader (the document's `{widget_host}/widget/v1/paywidget.js`). */
export const WIDGET_SCRIPT_PATH = '/widget/v1/paywidget.js';

/** Options of `widgetScriptTag()`. */
export interface WidgetScriptTagOptions {
  /** Origin of the widget host, e.g. `https://widget.pay.example`. Default: `PAY_WIDGET_HOST`. */
  widgetHost?: string | undefined;
  /** The sha384 hash published for the script, `sha384-<base64>`. Default: `PAY_WIDGET_INTEGRITY`. */
  integrity?: string | undefined;
  /**
   * The payment API (`payment.apiUrl` of createPay), only to refuse a widget host that is the API host:
   * the checkout is created on the host the loader came from. Default: `PAY_API_URL`.
   */
  apiUrl?: string | undefined;
  /** A CSP nonce for the `<script>` tag, if your page's Content-Security-Policy uses one. */
  nonce?: string | undefined;
  /**
   * Loads the script without holding up the page (`async`): a widget host that hangs leaves the page shown,
   * not blank. The page then starts the widget on the tag's `load` event (`PayWidget` is undefined before).
   */
  async?: boolean | undefined;
  /** Where the fallbacks are read; `process.env` by default. */
  env?: Record<string, string | undefined>;
}

const ENV = { widgetHost: 'PAY_WIDGET_HOST', integrity: 'PAY_WIDGET_INTEGRITY', apiUrl: 'PAY_API_URL' } as const;

/** sha384 is 48 bytes: 64 base64 characters, no padding. */
const SHA384 = /^sha384-[A-Za-z0-9+/]{64}$/;

function escapeAttribute(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Names where the bad value came from: the option passed, else the environment variable it fell back to. */
function invalid(option: keyof typeof ENV | 'nonce', problem: string, options: WidgetScriptTagOptions): PayError {
  const where = option === 'nonce' || options[option] !== undefined ? `option ${option}` : `${option} (from the environment variable ${ENV[option]})`;
  return new PayError('CONFIG_INVALID', `widgetScriptTag: ${where} ${problem}.`, { details: { options: [option] } });
}

function origin(option: 'widgetHost' | 'apiUrl', value: string, options: WidgetScriptTagOptions): string {
  if (!URL.canParse(value)) throw invalid(option, 'must be an absolute http(s) URL', options);
  const url = new URL(value);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid(option, 'must be an http(s) URL', options);
  if (option === 'widgetHost' && (url.pathname !== '/' || url.search || url.hash || url.username || url.password)) {
    throw invalid(option, `must be the widget host's origin only (such as https://widget.pay.example), without a path`, options);
  }
  return url.origin;
}

/**
 * The `<script>` tag that loads the payment widget on a checkout page, as the document requires: from
 * `{widgetHost}/widget/v1/paywidget.js`, with `integrity` (the published sha384 hash) and
 * `crossorigin="anonymous"`. Throws CONFIG_INVALID when the widget host is the API host (same origin):
 * a passkey would be saved against the wrong domain, with no error to tell you. Attributes are HTML-escaped.
 */
export function widgetScriptTag(options: WidgetScriptTagOptions = {}): string {
  const env = options.env ?? globalThis.process?.env ?? {};
  const value = (option: keyof typeof ENV) => {
    const given = options[option] ?? env[ENV[option]];
    return given === undefined || given.trim() === '' ? undefined : given.trim();
  };
  const widgetHost = value('widgetHost');
  const integrity = value('integrity');
  const apiUrl = value('apiUrl');
  const missing = (['widgetHost', 'integrity', 'apiUrl'] as const).filter((o) => value(o) === undefined);
  if (missing.length > 0) {
    const named = missing.map((o) => `${o} (environment variable ${ENV[o]})`).join(', ');
    throw new PayError('CONFIG_MISSING', `widgetScriptTag needs ${named}. Pass it or set the environment variable.`, { details: { options: missing } });
  }
  const widgetOrigin = origin('widgetHost', widgetHost!, options);
  if (widgetOrigin === origin('apiUrl', apiUrl!, options)) {
    throw invalid('widgetHost', `is the payment API host (${widgetOrigin}); load the widget from its own widget host, which differs from the API host`, options);
  }
  if (!SHA384.test(integrity!)) throw invalid('integrity', 'must be the published hash of the script: "sha384-" followed by 64 base64 characters', options);
  if (options.nonce !== undefined && options.nonce === '') throw invalid('nonce', 'must not be empty', options);
  const attributes: [string, string][] = [
    ['src', `${widgetOrigin}${WIDGET_SCRIPT_PATH}`],
    ['integrity', integrity!],
    ['crossorigin', 'anonymous'],
  ];
  if (options.nonce !== undefined) attributes.push(['nonce', options.nonce]);
  return `<script ${attributes.map(([name, v]) => `${name}="${escapeAttribute(v)}"`).join(' ')}${options.async === true ? ' async' : ''}></script>`;
}

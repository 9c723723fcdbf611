import { widgetScriptTag } from 'paywidget-server';
import { describe, expect, it } from 'vitest';
import { thrown } from '../helpers/pay-errors.js';

const integrity = `sha384-${'A'.repeat(63)}B`;
const base = { widgetHost: 'https://widget.pay.example', integrity, apiUrl: 'https://api.pay.example', env: {} };

const refusal = (options: Parameters<typeof widgetScriptTag>[0]) => thrown(() => widgetScriptTag(options), 'widgetScriptTag to throw');

describe('widgetScriptTag', () => {
  it('loads /widget/v1/paywidget.js from the widget host with integrity and crossorigin="anonymous"', () => {
    expect(widgetScriptTag(base)).toBe(
      `<script src="https://widget.pay.example/widget/v1/paywidget.js" integrity="${integrity}" crossorigin="anonymous"></script>`,
    );
    expect(widgetScriptTag({ ...base, widgetHost: 'https://widget.pay.example/' })).toContain('src="https://widget.pay.example/widget/v1/paywidget.js"');
  });

  it('with { async: true }, loads without holding up the page', () => {
    expect(widgetScriptTag({ ...base, async: true })).toBe(
      `<script src="https://widget.pay.example/widget/v1/paywidget.js" integrity="${integrity}" crossorigin="anonymous" async></script>`,
    );
  });

  it('HTML-escapes its attributes', () => {
    const tag = widgetScriptTag({ ...base, nonce: `"><script>alert('x')</script>&` });
    expect(tag).toContain('nonce="&#34;&#62;&#60;script&#62;alert(&#39;x&#39;)&#60;/script&#62;&#38;"');
    expect(tag.match(/<script/g)).toHaveLength(1);
    // A host with characters that would break out of the attribute is not an origin at all.
    expect(refusal({ ...base, widgetHost: 'https://widget.pay.example/"onload="x' }).code).toBe('CONFIG_INVALID');
  });

  it('refuses a widget host that is the API host (same origin), naming the problem', () => {
    for (const widgetHost of ['https://api.pay.example', 'https://API.pay.example:443/', 'https://api.pay.example/']) {
      const error = refusal({ ...base, widgetHost, apiUrl: 'https://api.pay.example/some/base' });
      expect(error.code).toBe('CONFIG_INVALID');
      expect(error.message).toMatch(/widgetHost .*is the payment API host/);
    }
    // Another port is another origin (the sandbox runs both hosts on 127.0.0.1).
    expect(widgetScriptTag({ ...base, widgetHost: 'http://127.0.0.1:4001', apiUrl: 'http://127.0.0.1:4000' })).toContain('http://127.0.0.1:4001/widget/v1/paywidget.js');
  });

  it('refuses a malformed widget host, API URL or integrity, naming the option it came from', () => {
    expect(refusal({ ...base, widgetHost: 'widget.pay.example' }).message).toBe('widgetScriptTag: option widgetHost must be an absolute http(s) URL.');
    expect(refusal({ ...base, widgetHost: 'https://widget.pay.example/widget/v1/paywidget.js' }).message).toContain('without a path');
    expect(refusal({ ...base, widgetHost: 'ftp://widget.pay.example' }).code).toBe('CONFIG_INVALID');
    expect(refusal({ ...base, apiUrl: 'not a url' }).message).toContain('option apiUrl must be');
    for (const bad of ['sha256-abc', 'sha384-short', `sha384-${'A'.repeat(64)}"`, integrity.slice(7)]) {
      expect(refusal({ ...base, integrity: bad }).message).toContain('option integrity must be the published hash');
    }
  });

  it('names the environment variable when the bad value came from it, not an option never passed', () => {
    const env = { PAY_WIDGET_HOST: 'widget.pay.example', PAY_WIDGET_INTEGRITY: 'sha384-short', PAY_API_URL: 'https://api.pay.example' };
    expect(refusal({ env }).message).toBe('widgetScriptTag: widgetHost (from the environment variable PAY_WIDGET_HOST) must be an absolute http(s) URL.');
    expect(refusal({ env, widgetHost: 'https://widget.pay.example' }).message).toContain('integrity (from the environment variable PAY_WIDGET_INTEGRITY) must be the published hash');
  });

  it('falls back to PAY_WIDGET_HOST, PAY_WIDGET_INTEGRITY and PAY_API_URL, and names what is missing', () => {
    const env = { PAY_WIDGET_HOST: 'https://widget.pay.example', PAY_WIDGET_INTEGRITY: integrity, PAY_API_URL: 'https://api.pay.example' };
    expect(widgetScriptTag({ env })).toBe(widgetScriptTag(base));
    expect(refusal({ env: { ...env, PAY_API_URL: env.PAY_WIDGET_HOST } }).code).toBe('CONFIG_INVALID');
    const missing = refusal({ env: { PAY_WIDGET_HOST: 'https://widget.pay.example', PAY_WIDGET_INTEGRITY: ' ' } });
    expect(missing.code).toBe('CONFIG_MISSING');
    expect(missing.message).toBe('widgetScriptTag needs integrity (environment variable PAY_WIDGET_INTEGRITY), apiUrl (environment variable PAY_API_URL). Pass it or set the environment variable.');
  });
});

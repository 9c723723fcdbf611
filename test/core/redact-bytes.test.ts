import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { redactBytes } from '../../src/core/redact-bytes.js';

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array) => new TextDecoder().decode(data);

describe('redactBytes', () => {
  it('ends on a secret of backslashes against a long run of them (each is itself or an escape: 3^n readings)', async () => {
    // Run in a child process that is killed after 15 s: searched reading by reading, 3^60 tries, it would never end
    // and hold this worker with it. Finished, it prints what it redacted. A browser's payment_client_token is such a secret.
    const script = `
      import { redactBytes } from './src/core/redact-bytes.ts';
      const secret = '\\\\'.repeat(60) + '!';
      const run = (body) => new TextDecoder().decode(redactBytes(new TextEncoder().encode(body), [secret]));
      console.log(JSON.stringify([run('{"error":"invalid token ' + '\\\\'.repeat(200) + '"}'), run('<' + secret + '>'), run('<' + JSON.stringify(secret).slice(1, -1) + '>')]));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: fileURLToPath(new URL('../..', import.meta.url)), timeout: 15_000 });
    expect(JSON.parse(stdout)).toEqual([`{"error":"invalid token ${'\\'.repeat(200)}"}`, '<[redacted]>', '<[redacted]>']);
  });

  it('withholds a body whose search would take too long (a near miss of a long secret at every position), not passes it on', () => {
    const secret = `${'a'.repeat(4_000)}!`;
    expect(text(redactBytes(bytes(`{"echo":"${'a'.repeat(4_000)}"}`), [secret]))).toBe('[redacted]');
    // A near miss of a secret of 4,000 escaped characters (a client token may have 4,096): deeper than the stack, withheld too.
    const ampersands = `${'&'.repeat(4_000)}!`;
    expect(text(redactBytes(bytes(`${'&amp;'.repeat(4_000)}?`), [ampersands]))).toBe('[redacted]');
    // An ordinary body with a shorter near miss is searched to its end and kept.
    expect(text(redactBytes(bytes(`{"echo":"${'a'.repeat(100)}"}`), [secret]))).toBe(`{"echo":"${'a'.repeat(100)}"}`);
  });

  it('replaces a secret as sent, JSON-escaped (quotes, backslashes, PHP\'s \\/) and percent-encoded', () => {
    const secret = 'a"b\\c/d e';
    const echoed = [secret, JSON.stringify(secret).slice(1, -1), JSON.stringify(secret).slice(1, -1).replaceAll('/', '\\/'), encodeURIComponent(secret)];
    expect(text(redactBytes(bytes(echoed.join('|')), [secret]))).toBe('[redacted]|[redacted]|[redacted]|[redacted]');
  });

  it('replaces a secret past ASCII written with \\u escapes, as PHP\'s json_encode does, in lower or upper case', () => {
    const secret = 'pä/ß';
    const echoed = ['p\\u00e4\\/\\u00df', 'p\\u00E4/\\u00DF', secret];
    expect(text(redactBytes(bytes(echoed.join('|')), [secret]))).toBe('[redacted]|[redacted]|[redacted]');
  });

  it('replaces a secret however an echo escapes each character: System.Text.Json, Go, HTML entities, percent in either case', () => {
    const secret = 'sk_live_4eC39+p7dc/Qx==&<a b>';
    const echoed = [
      'sk_live_4eC39\\u002Bp7dc/Qx==\\u0026\\u003Ca b\\u003E', // System.Text.Json: +, &, <, > as \u00XX
      'sk_live_4eC39+p7dc\\/Qx==\\u0026\\u003ca b\\u003e', // Go's encoding/json, PHP's \/
      'sk_live_4eC39+p7dc/Qx==&amp;&lt;a b&gt;', // an HTML page quoting it
      'sk_live_4eC39&#43;p7dc&#x2F;Qx&#61;&#x3d;&amp;&#60;a&#32;b&#x3E;', // numeric entities
      'sk_live_4eC39%2bp7dc%2fQx%3d%3D%26%3ca+b%3E', // percent-encoded, either case, + for the space (a form)
    ];
    expect(text(redactBytes(bytes(echoed.join('|')), [secret]))).toBe(echoed.map(() => '[redacted]').join('|'));
    // A near miss stays: one character off is not the secret.
    expect(text(redactBytes(bytes('sk_live_4eC39\\u002Cp7dc/Qx==&<a b>'), [secret]))).toBe('sk_live_4eC39\\u002Cp7dc/Qx==&<a b>');
  });

  it('replaces a secret written with HTML5\'s named references for punctuation (PHP\'s ENT_HTML5)', () => {
    const secret = 'sk_live_9f8e.7d/6c+5b';
    const echoed = 'sk&lowbar;live&UnderBar;9f8e&period;7d&sol;6c&plus;5b';
    expect(text(redactBytes(bytes(`key=${echoed};`), [secret]))).toBe('key=[redacted];');
  });

  it('replaces a secret escaped twice over, as an echo of an echo writes it: JSON in JSON, a URL encoded again, an entity quoted as HTML', () => {
    const secret = 'p"w\\d/+x\n😀';
    const once = JSON.stringify(secret).slice(1, -1);
    const echoed = [
      JSON.stringify(once).slice(1, -1), // a gateway's JSON error quoting the JSON request body
      JSON.stringify(once).slice(1, -1).replace('+', '\\\\u002B').replace('😀', '\\\\uD83D\\\\uDE00'), // the same, System.Text.Json-style \u escapes
      encodeURIComponent(encodeURIComponent(secret)), // %252F
      'p&amp;quot;w&amp;#92;d&amp;#x2f;&amp;#43;x&amp;#10;&amp;#128512;', // entities quoted as HTML
    ];
    expect(text(redactBytes(bytes(echoed.join('|')), [secret]))).toBe(echoed.map(() => '[redacted]').join('|'));
    // A quote after a doubled backslash ends a JSON string: it is no echo of one, and stays.
    expect(text(redactBytes(bytes('p\\\\"x'), ['p"x']))).toBe('p\\\\"x');
  });

  it('replaces a secret escaped twice by two different writers: JSON put in a URL or in HTML, an entity put in a URL or in JSON', () => {
    const secret = 'sk_"live/Ab9+cD&eF==';
    const php = (text: string) => JSON.stringify(text).slice(1, -1).replaceAll('/', '\\/'); // PHP's json_encode
    const html = (text: string) => text.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;');
    const echoed = [
      encodeURIComponent(php(secret)), // a gateway's JSON error linked in a support URL: %5C%22, %5C%2F
      html(php(secret)), // the JSON error quoted in an HTML page: \&quot;
      encodeURIComponent(html(secret)), // an HTML fragment put in a URL: %26amp%3B
      JSON.stringify(html(secret)).slice(1, -1).replaceAll('&', '\\u0026'), // the fragment in System.Text.Json: \u0026amp;
    ];
    expect(text(redactBytes(bytes(echoed.join('|')), [secret]))).toBe(echoed.map(() => '[redacted]').join('|'));
    // Near misses stay.
    const near = encodeURIComponent(php('sk_"live/Ab9+cD&eF=!'));
    expect(text(redactBytes(bytes(near), [secret]))).toBe(near);
  });

  it('returns the same array when no secret occurs, and ignores an empty secret', () => {
    const body = bytes('{"error":"bad"}');
    expect(redactBytes(body, ['sk_live_x', ''])).toBe(body);
  });

  it('replaces every occurrence of each secret and keeps the bytes around them', () => {
    expect(text(redactBytes(bytes('k1 and k1, then k2.'), ['k1', 'k2']))).toBe('[redacted] and [redacted], then [redacted].');
  });
});

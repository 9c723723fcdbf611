import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { createDecompressor } from './decompress.js';
import { declaredTooLarge, MAX_RESPONSE_BYTES, ResponseTooLargeError } from './limit.js';
import type { Transport, UpstreamHeaders } from './index.js';

export interface NodeHttpModules {
  http: Pick<typeof import('node:http'), 'request'>;
  https: Pick<typeof import('node:https'), 'request'>;
  zlib: Pick<typeof import('node:zlib'), 'gunzip' | 'inflate' | 'brotliDecompress' | 'constants'>;
}

/**
 * node:http(s) on the global keep-alive agents. Like fetch, it asks for compressed answers and
 * decompresses them, trims header values, and rejects with the signal's reason when it aborts.
 */
export function nodeTransport({ http, https, zlib }: NodeHttpModules): Transport {
  const decompress = createDecompressor(zlib);

  return (request, signal) => new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const url = new URL(request.url);
    const headers: Record<string, string | number> = { 'accept-encoding': 'gzip, deflate, br' };
    // fetch strips surrounding whitespace from values (a key read from a file keeps its newline); node:http would throw.
    for (const name in request.headers) headers[name] = request.headers[name]!.trim();
    if (request.body !== undefined) headers['content-length'] = Buffer.byteLength(request.body);

    let settled = false;
    const settle = (error: unknown, response?: IncomingMessage, body?: Buffer) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      if (error !== undefined) return reject(error);
      const status = response!.statusCode!;
      resolve({ status, ok: status >= 200 && status < 300, headers: readHeaders(response!.headers), body: body! });
    };
    const onAbort = () => {
      settle(signal.reason);
      outgoing.destroy();
    };

    const send = url.protocol === 'https:' ? https.request : http.request;
    const outgoing = send(url, { method: request.method, headers }, (response) => {
      const chunks: Buffer[] = [];
      let length = 0;
      const tooLarge = () => {
        settle(new ResponseTooLargeError());
        response.destroy();
      };
      if (declaredTooLarge(response.headers['content-length'])) return tooLarge();
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        length += chunk.length;
        if (length > MAX_RESPONSE_BYTES) tooLarge();
      });
      response.on('error', (error) => settle(error));
      response.on('end', () => {
        // A buffer of its own (not a view into Node's pool), like fetch's: callers may keep it, or read `.buffer`.
        const raw = Buffer.allocUnsafeSlow(length);
        let offset = 0;
        for (const chunk of chunks) offset += chunk.copy(raw, offset);
        const encoding = response.headers['content-encoding'];
        if (encoding === undefined) return settle(undefined, response, raw);
        decompress(encoding, raw).then((body) => settle(undefined, response, body), (error: unknown) => settle(error));
      });
    });
    outgoing.on('error', (error) => settle(error));
    signal.addEventListener('abort', onAbort, { once: true });
    outgoing.end(request.body);
  });
}

function readHeaders(headers: IncomingHttpHeaders): UpstreamHeaders {
  return {
    get(name) {
      const value = headers[name.toLowerCase()];
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
    },
  };
}

import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Transport, UpstreamHeaders } from './index.js';

export interface NodeHttpModules {
  http: Pick<typeof import('node:http'), 'request'>;
  https: Pick<typeof import('node:https'), 'request'>;
  zlib: Pick<typeof import('node:zlib'), 'gunzip' | 'inflate' | 'brotliDecompress'>;
}

/**
 * node:http(s) on the global keep-alive agents. Like fetch, it asks for compressed answers and
 * decompresses them (off the main thread), and rejects with the signal's reason when it aborts.
 */
export function nodeTransport({ http, https, zlib }: NodeHttpModules): Transport {
  const decoders: Record<string, (body: Buffer, done: (error: Error | null, result: Buffer) => void) => void> = {
    gzip: zlib.gunzip,
    'x-gzip': zlib.gunzip,
    deflate: zlib.inflate,
    br: zlib.brotliDecompress,
  };

  return (request, signal) => new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const url = new URL(request.url);
    const headers: Record<string, string | number> = { 'accept-encoding': 'gzip, deflate, br', ...request.headers };
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
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        length += chunk.length;
      });
      response.on('error', (error) => settle(error));
      response.on('end', () => {
        const raw = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length);
        const decode = decoders[String(response.headers['content-encoding']).toLowerCase()];
        // An empty body (HEAD, 204, 304) has nothing to decompress, whatever the header says.
        if (!decode || raw.length === 0) return settle(undefined, response, raw);
        decode(raw, (error, body) => (error ? settle(error) : settle(undefined, response, body)));
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

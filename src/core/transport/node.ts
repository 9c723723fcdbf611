import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { BodyWriter } from './body-buffers.js';
import { BodyDecodingError, createDecoders } from './decompress.js';
import { declaredTooLarge, hasBody, MAX_RESPONSE_BYTES, ResponseTooLargeError } from './limit.js';
import type { Transport, UpstreamHeaders } from './index.js';
import { ResponseCutError } from './response-cut.js';

export interface NodeHttpModules {
  http: Pick<typeof import('node:http'), 'request'>;
  https: Pick<typeof import('node:https'), 'request'>;
  zlib: Pick<typeof import('node:zlib'), 'createGunzip' | 'createInflate' | 'createInflateRaw' | 'createBrotliDecompress' | 'constants'>;
  stream: Pick<typeof import('node:stream'), 'Transform'>;
}

/**
 * node:http(s) on the global keep-alive agents. Like fetch, it asks for compressed answers and
 * decompresses them, trims header values, and rejects with the signal's reason when it aborts.
 */
export function nodeTransport({ http, https, zlib, stream }: NodeHttpModules): Transport {
  const decodersFor = createDecoders(zlib, stream.Transform);

  return (request, signal) => new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const url = new URL(request.url);
    const headers: Record<string, string | number> = { 'accept-encoding': 'gzip, deflate, br' };
    // fetch strips surrounding whitespace from values (a key read from a file keeps its newline); node:http would throw.
    for (const name in request.headers) headers[name] = request.headers[name]!.trim();
    if (request.body !== undefined) headers['content-length'] = Buffer.byteLength(request.body);

    let settled = false;
    const settle = (error: unknown, response?: IncomingMessage, body?: Uint8Array) => {
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
    /** Once the status line and headers came, a failure breaks an answer off: it is not a connection never made. */
    let answered = false;
    const outgoing = send(url, { method: request.method, headers }, (response) => {
      // Whatever the answer holds, a throw here would be uncaught and end the process: it settles the call instead.
      try {
        onResponse(response);
      } catch (error) {
        settle(error);
        response.destroy();
      }
    });
    const onResponse = (response: IncomingMessage) => {
      answered = true;
      const status = response.statusCode!;
      const encoding = response.headers['content-encoding'];
      // A HEAD, 204 or 304 answer has no body, whatever its headers say: nothing to bound or decompress.
      const withBody = hasBody(request.method, status);
      const decoders = withBody ? decodersFor(encoding) : [];
      // Read into a buffer the caller gives back, when it says it will (request.bodies); otherwise into one of the answer's own.
      const pooled = withBody && request.bodies ? new BodyWriter(request.bodies, decoders.length === 0 ? Number(response.headers['content-length']) : Number.NaN) : undefined;
      // Settles with `error` and stops reading: the rest of the answer is not wanted.
      const fail = (error: unknown) => {
        // Its buffer goes back only if this failure settled the call: once answered, the caller reads it.
        if (!settled) pooled?.discard();
        settle(error);
        response.destroy();
        for (const decoder of decoders) decoder.destroy();
      };
      if (withBody && declaredTooLarge(response.headers['content-length'])) return fail(new ResponseTooLargeError());
      response.on('error', (error) => fail(new ResponseCutError(error)));
      let body: Readable = response;
      for (const decoder of decoders) {
        decoder.on('error', (error) => fail(new BodyDecodingError(encoding!, error)));
        body = body.pipe(decoder);
      }
      // Counted after decompression, as it arrives: a small compressed answer may expand without end.
      const chunks: Buffer[] = [];
      let length = 0;
      body.on('data', (chunk: Buffer) => {
        if (settled) return; // a failed answer's buffer may be another's by now
        length += chunk.length;
        if (length > MAX_RESPONSE_BYTES) return fail(new ResponseTooLargeError());
        if (pooled) pooled.write(chunk);
        else chunks.push(chunk);
      });
      body.on('end', () => {
        if (pooled) return settle(undefined, response, pooled.bytes());
        // A buffer of its own (not a view into Node's pool), like fetch's: callers may keep it, or read `.buffer`.
        const whole = Buffer.allocUnsafeSlow(length);
        let offset = 0;
        for (const chunk of chunks) offset += chunk.copy(whole, offset);
        settle(undefined, response, whole);
      });
    };
    // A 101 Switching Protocols ends HTTP on this socket: answered as it is (the caller refuses the status)
    // instead of Node closing the socket unheard and the call waiting out its time-out.
    outgoing.on('upgrade', (response: IncomingMessage, socket: { destroy(): void }) => {
      socket.destroy();
      settle(undefined, response, Buffer.alloc(0));
    });
    // A reset or a malformed chunk mid-body comes here, not on the response.
    outgoing.on('error', (error) => settle(answered ? new ResponseCutError(error) : error));
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

import { EventEmitter, once } from 'node:events';
import * as http from 'node:http';
import * as https from 'node:https';
import { createRequire } from 'node:module';
import * as stream from 'node:stream';
import * as zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectTransport, type Transport, type UpstreamResponse } from '../../../src/core/transport/index.js';
import { BodyBuffers } from '../../../src/core/transport/body-buffers.js';
import { BodyDecodingError } from '../../../src/core/transport/decompress.js';
import { fetchTransport } from '../../../src/core/transport/fetch.js';
import { declaredTooLarge, MAX_RESPONSE_BYTES, ResponseTooLargeError } from '../../../src/core/transport/limit.js';
import { nodeTransport } from '../../../src/core/transport/node.js';
import { ResponseCutError } from '../../../src/core/transport/response-cut.js';
import { freePort } from '../../helpers/free-port.js';
import { startLocalServer, type LocalServer } from '../../helpers/local-server.js';

const JSON_BODY = Buffer.from(JSON.stringify({ items: [{ sku: '24-MB02', price: 59 }], total_count: 1 }));
// Big enough to arrive in many chunks, and to compress.
const BIG_BODY = Buffer.from(JSON.stringify(Array.from({ length: 3_000 }, (_, i) => ({ id: i, sku: `SKU-${i}`, note: 'Zürich – 東京' }))));
const COMPRESS: Record<string, (body: Buffer) => Buffer> = {
  gzip: (body) => zlib.gzipSync(body),
  deflate: (body) => zlib.deflateSync(body),
  br: (body) => zlib.brotliCompressSync(body),
};
const GZIPPED = zlib.gzipSync(BIG_BODY);
// One byte past the limit, and a compression bomb: about 65 KB on the wire that expand past it.
const PAST_LIMIT = Buffer.alloc(MAX_RESPONSE_BYTES + 1, 0x20);
const BOMB = zlib.gzipSync(PAST_LIMIT, { level: 9 });

/** Tells a test when a request reached the server, so it aborts a request that is really in flight. */
const arrivals = new EventEmitter();
const hits = new Map<string, number>();
let local: LocalServer;
let base: string;

beforeAll(async () => {
  local = await startLocalServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
    arrivals.emit(url.pathname);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const encoding = url.pathname.slice('/compressed/'.length);
      switch (url.pathname) {
        case '/json':
          return res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'X-Request-Id': 'r-1' }).end(JSON_BODY);
        case '/big':
          return res.writeHead(200, { 'content-type': 'application/json' }).end(BIG_BODY);
        case '/chunked': {
          // No Content-Length: the body comes in pieces of chunked encoding.
          res.writeHead(200, { 'content-type': 'application/json' });
          for (let i = 0; i < BIG_BODY.length; i += 10_000) res.write(BIG_BODY.subarray(i, i + 10_000));
          return res.end();
        }
        case '/head':
          return res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1234' }).end();
        case '/echo': {
          const received = Buffer.concat(chunks);
          const echo = { method: req.method, contentLength: req.headers['content-length'], bytes: received.length, body: received.toString('utf8'), auth: req.headers.authorization };
          return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(echo));
        }
        case '/unavailable':
          return res.writeHead(503, { 'content-type': 'text/plain', 'retry-after': '7' }).end('try later');
        case '/redirect':
          return res.writeHead(302, { location: '/redirect-target' }).end();
        case '/compressed/gzip':
        case '/compressed/deflate':
        case '/compressed/br':
          return res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': encoding }).end(COMPRESS[encoding]!(BIG_BODY));
        case '/compressed/deflate-raw':
          // Raw deflate (no zlib header) under `deflate`, as some servers send it.
          return res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'deflate' }).end(zlib.deflateRawSync(BIG_BODY));
        case '/compressed/deflate-empty':
          return res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'deflate' }).end();
        case '/stacked':
          // `gzip, br`: gzip was applied first, then br over it.
          return res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip, br' }).end(zlib.brotliCompressSync(GZIPPED));
        case '/truncated':
          return res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(GZIPPED.subarray(0, GZIPPED.length >> 1));
        case '/unknown-coding':
          return res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'x-custom' }).end('bytes as sent');
        case '/coding/constructor':
        case '/coding/__proto__':
        case '/coding/toString':
          return res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': url.pathname.slice('/coding/'.length) }).end('bytes as sent');
        case '/corrupt-deflate':
          return res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'deflate' }).end(Buffer.from([0xff, 0xff, 0xff, 0xff]));
        case '/corrupt':
          return res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end('this is not gzip');
        case '/past-limit':
          return res.writeHead(400, { 'content-type': 'application/json' }).end(PAST_LIMIT);
        case '/past-limit-chunked': {
          // No Content-Length: only counting the bytes as they come can stop it.
          res.writeHead(400, { 'content-type': 'application/json' });
          for (let i = 0; i < PAST_LIMIT.length; i += 1 << 20) res.write(PAST_LIMIT.subarray(i, i + (1 << 20)));
          return res.end();
        }
        case '/bomb':
          return res.writeHead(400, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(BOMB);
        case '/declared-past-limit':
          // Claims more than the limit, sends a little and stalls: only the declared length can refuse it in time.
          res.writeHead(400, { 'content-type': 'application/json', 'content-length': String(MAX_RESPONSE_BYTES + 1) });
          return void res.write('{"error":');
        case '/endless-bomb': {
          // A gzip stream that expands past the limit and never ends: only counting as it arrives can stop it.
          res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
          const gzip = zlib.createGzip();
          gzip.pipe(res);
          const zeros = Buffer.alloc(16 << 20, 0x20);
          for (let i = 0; i < 5; i++) gzip.write(zeros);
          return void gzip.flush();
        }
        case '/head-huge':
          return res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(MAX_RESPONSE_BYTES * 4) }).end();
        case '/hang':
          return; // never answers
        case '/hang-closing':
          // Never answers, and tells when the client closed the connection.
          return void req.socket.once('close', () => arrivals.emit('hang-closed'));
        case '/stall':
          res.writeHead(200, { 'content-type': 'application/json' });
          return void res.write('{"items":['); // starts the body, never ends it
        case '/cut':
          // Promises 100 bytes, sends 10, then drops the connection.
          res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '100' });
          res.write('0123456789');
          return void setTimeout(() => res.socket?.destroy(), 10);
        default:
          return res.writeHead(404).end();
      }
    });
  });
  base = local.base;
});

afterAll(() => local.close()); // drops the hanging and stalled requests' sockets too

const get = (path: string) => ({ method: 'GET', url: `${base}${path}` });
// Buffer#equals, not toEqual: toEqual walks a big buffer byte by byte and takes seconds.
const sameBytes = (body: Uint8Array, expected: Buffer) => expect(Buffer.from(body).equals(expected), `${body.byteLength} bytes vs ${expected.length}`).toBe(true);
const text = (res: UpstreamResponse) => Buffer.from(res.body).toString('utf8');
const rejection = (promise: Promise<unknown>) => promise.then(() => expect.unreachable('resolved'), (error: unknown) => error as Error & { code?: string; cause?: { code?: string; name?: string; cause?: { code?: string } } });
const node = nodeTransport({ http, https, zlib, stream });

describe.each([
  ['fetch', fetchTransport],
  ['node:http', node],
])('%s transport', (name, transport: Transport) => {
  const signal = () => AbortSignal.timeout(5_000);

  it('reads a 200 JSON answer: exact bytes, status, ok, headers by any case, missing header null', async () => {
    const res = await transport(get('/json'), signal());
    expect(res.status).toBe(200);
    expect(res.ok).toBe(true);
    expect(res.body).toBeInstanceOf(Uint8Array);
    sameBytes(res.body, JSON_BODY);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('Content-Type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('x-request-id')).toBe('r-1');
    expect(res.headers.get('x-not-sent')).toBeNull();
  });

  it('reads a body that arrives in many chunks, with or without a Content-Length, into a buffer of its own', async () => {
    for (const path of ['/big', '/chunked']) {
      const res = await transport(get(path), signal());
      sameBytes(res.body, BIG_BODY);
      // Not a view into a shared pool: a caller may keep the body or read its `.buffer`.
      expect(res.body.byteOffset).toBe(0);
      expect(res.body.buffer.byteLength).toBe(BIG_BODY.length);
    }
  });

  it('refuses an answer past the size limit, declared, streamed or decompressed, without reading it all', async () => {
    expect(BOMB.length).toBeLessThan(MAX_RESPONSE_BYTES / 100);
    for (const path of ['/past-limit', '/past-limit-chunked', '/bomb']) {
      const error = await rejection(transport(get(path), signal()));
      expect([path, error]).toEqual([path, expect.any(ResponseTooLargeError)]);
      expect(error.message).toContain('64 MiB');
    }
    // The connection pool is still usable afterwards.
    sameBytes((await transport(get('/json'), signal())).body, JSON_BODY);
  });

  it('refuses a declared length past the limit and an endless compressed stream at once, not at the time-out', async () => {
    for (const path of ['/declared-past-limit', '/endless-bomb']) {
      // Checked only at the end, either would stall until the signal's time-out: a TimeoutError.
      const error = await rejection(transport(get(path), AbortSignal.timeout(5_000)));
      expect([path, error]).toEqual([path, expect.any(ResponseTooLargeError)]);
    }
  });

  it('reads a HEAD answer whose Content-Length is past the limit: it has no body', async () => {
    const res = await transport({ method: 'HEAD', url: `${base}/head-huge` }, signal());
    expect(res.status).toBe(200);
    expect(res.body.length).toBe(0);
  });

  it('answers a HEAD with an empty body, whatever Content-Length says', async () => {
    const res = await transport({ method: 'HEAD', url: `${base}/head` }, signal());
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe('1234');
    expect(res.body.length).toBe(0);
  });

  it('sends a POST string body intact, multi-byte UTF-8 included, with the right content-length', async () => {
    const body = JSON.stringify({ note: 'Grüße – 東京 🚀', qty: 2 });
    const res = await transport({ method: 'POST', url: `${base}/echo`, headers: { 'content-type': 'application/json', authorization: 'Bearer t' }, body }, signal());
    const echo = JSON.parse(text(res)) as Record<string, unknown>;
    // The byte length, not the string length: they differ for multi-byte characters.
    expect(Buffer.byteLength(body)).not.toBe(body.length);
    expect(echo).toEqual({ method: 'POST', contentLength: String(Buffer.byteLength(body)), bytes: Buffer.byteLength(body), body, auth: 'Bearer t' });
  });

  it('returns a non-2xx as a response with ok=false and the body and headers intact', async () => {
    const res = await transport(get('/unavailable'), signal());
    expect(res).toMatchObject({ status: 503, ok: false });
    expect(text(res)).toBe('try later');
    expect(res.headers.get('Retry-After')).toBe('7');
  });

  it('does not follow a redirect', async () => {
    const res = await transport(get('/redirect'), signal());
    expect(res).toMatchObject({ status: 302, ok: false });
    expect(res.headers.get('location')).toBe('/redirect-target');
    await new Promise((resolve) => setTimeout(resolve, 20)); // a followed redirect would have arrived by now
    expect(hits.get('/redirect-target')).toBeUndefined();
  });

  it.each(['gzip', 'deflate', 'br'])('decompresses a %s answer', async (encoding) => {
    const res = await transport(get(`/compressed/${encoding}`), signal());
    expect(res.status).toBe(200);
    sameBytes(res.body, BIG_BODY);
  });

  it('decompresses raw deflate sent as deflate (no zlib header), as fetch does', async () => {
    const res = await transport(get('/compressed/deflate-raw'), signal());
    expect(res.status).toBe(200);
    sameBytes(res.body, BIG_BODY);
  });

  it('answers an empty deflate body as empty', async () => {
    const res = await transport(get('/compressed/deflate-empty'), signal());
    expect(res.status).toBe(200);
    expect(res.body.byteLength).toBe(0);
  });

  it('undoes stacked codings, the last applied first (gzip, br: br over gzip)', async () => {
    const res = await transport(get('/stacked'), signal());
    sameBytes(res.body, BIG_BODY);
  });

  it('yields the decompressed prefix of a gzip stream cut short', async () => {
    const res = await transport(get('/truncated'), signal());
    expect(res.body.byteLength).toBeGreaterThan(0);
    expect(res.body.byteLength).toBeLessThan(BIG_BODY.length);
    sameBytes(res.body, BIG_BODY.subarray(0, res.body.byteLength));
  });

  it('leaves the bytes of an unknown coding as sent', async () => {
    const res = await transport(get('/unknown-coding'), signal());
    expect(text(res)).toBe('bytes as sent');
    expect(res.headers.get('content-encoding')).toBe('x-custom');
  });

  it('leaves the bytes of a coding named like an object property as sent (constructor, __proto__): it crashed the process', async () => {
    for (const coding of ['constructor', '__proto__', 'toString']) {
      const res = await transport(get(`/coding/${coding}`), signal());
      expect(text(res)).toBe('bytes as sent');
    }
  });

  it('sends a header value with a trailing newline trimmed (a key read from a file)', async () => {
    const res = await transport({ method: 'POST', url: `${base}/echo`, headers: { authorization: 'Bearer t\n' }, body: '' }, signal());
    expect(JSON.parse(text(res))).toMatchObject({ auth: 'Bearer t' });
  });

  it('rejects with a TimeoutError when the server never answers', async () => {
    const error = await rejection(transport(get('/hang'), AbortSignal.timeout(50)));
    expect(error.name).toBe('TimeoutError');
  });

  it('closes the connection of a request it gave up on, so a hung service does not pile up sockets', async () => {
    const closed = once(arrivals, 'hang-closed').then(() => 'closed');
    const error = await rejection(transport(get('/hang-closing'), AbortSignal.timeout(50)));
    expect(error.name).toBe('TimeoutError');
    expect(await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 2_000, 'still open'))])).toBe('closed');
  });

  it('rejects with a TimeoutError when the body starts and then stalls: the time-out covers the body', async () => {
    const error = await rejection(transport(get('/stall'), AbortSignal.timeout(150)));
    expect(error.name).toBe('TimeoutError');
    expect(hits.get('/stall')).toBeGreaterThan(0);
  });

  it('rejects with an AbortError when the caller aborts a request in flight', async () => {
    const controller = new AbortController();
    const arrived = once(arrivals, '/hang');
    const pending = rejection(transport(get('/hang'), controller.signal));
    await arrived;
    controller.abort();
    expect((await pending).name).toBe('AbortError');
  });

  it('rejects at once on an already-aborted signal, sending nothing', async () => {
    const before = hits.get('/echo') ?? 0;
    const error = await rejection(transport({ method: 'POST', url: `${base}/echo`, body: 'x' }, AbortSignal.abort()));
    expect(error.name).toBe('AbortError');
    await new Promise((resolve) => setTimeout(resolve, 20)); // a request sent anyway would have arrived by now
    expect(hits.get('/echo') ?? 0).toBe(before);
  });

  it('rejects with ResponseCutError (not a time-out) when the server drops the connection in the middle of the body', async () => {
    const error = await rejection(transport(get('/cut'), signal()));
    expect(error).toBeInstanceOf(ResponseCutError);
    // node:http's reset carries its code; fetch's TypeError ('terminated') has undici's code on its cause.
    if (name === 'fetch') expect([error.cause?.name, error.cause?.cause?.code]).toEqual(['TypeError', 'UND_ERR_SOCKET']);
    else expect(error.cause?.code).toBe('ECONNRESET');
  });

  it('rejects a refused connection with ECONNREFUSED (on the error or its cause)', async () => {
    const port = await freePort();
    const error = await rejection(transport({ method: 'GET', url: `http://127.0.0.1:${port}/` }, signal()));
    expect([error.code, error.cause?.code]).toContain('ECONNREFUSED');
  });
});

describe('node:http transport: a body that does not decompress', () => {
  it('rejects with BodyDecodingError naming the Content-Encoding, zlib\'s error as its cause', async () => {
    const error = await rejection(node(get('/corrupt'), AbortSignal.timeout(5_000)));
    expect(error).toBeInstanceOf(BodyDecodingError);
    expect(error.message).toContain('Content-Encoding: gzip');
    expect((error as unknown as BodyDecodingError).encoding).toBe('gzip');
    expect(error.cause?.code).toBe('Z_DATA_ERROR');
  });

  it('rejects a deflate body that is neither zlib-wrapped nor raw deflate the same way', async () => {
    const error = await rejection(node(get('/corrupt-deflate'), AbortSignal.timeout(5_000)));
    expect(error).toBeInstanceOf(BodyDecodingError);
    expect((error as unknown as BodyDecodingError).encoding).toBe('deflate');
    expect(error.cause?.code).toBe('Z_DATA_ERROR');
  });
});

describe('selectTransport', () => {
  it('takes a declared length of exactly the limit as within it, one byte more as past it', () => {
    expect(declaredTooLarge(String(MAX_RESPONSE_BYTES))).toBe(false);
    expect(declaredTooLarge(String(MAX_RESPONSE_BYTES + 1))).toBe(true);
    expect(declaredTooLarge(null)).toBe(false);
  });

  it('picks fetch without process.getBuiltinModule (edge runtimes)', () => {
    expect(selectTransport({})).toBe(fetchTransport);
    expect(selectTransport({ process: {} })).toBe(fetchTransport);
  });

  it('picks fetch when a builtin it needs is missing', () => {
    const require = createRequire(import.meta.url);
    expect(selectTransport({ process: { getBuiltinModule: (id) => (id === 'node:zlib' ? undefined : require(id)) } })).toBe(fetchTransport);
  });

  it('picks fetch when getBuiltinModule throws (a runtime that imitates Node without these modules)', () => {
    const getBuiltinModule = () => {
      throw new Error('No such built-in module: node:http');
    };
    expect(selectTransport({ process: { getBuiltinModule } })).toBe(fetchTransport);
  });

  it('picks node:http when process.getBuiltinModule exists, and that transport works', async () => {
    const require = createRequire(import.meta.url);
    const asked: string[] = [];
    const transport = selectTransport({ process: { getBuiltinModule: (id) => (asked.push(id), require(id)) } });
    expect(transport).not.toBe(fetchTransport);
    expect(asked.sort()).toEqual(['node:http', 'node:https', 'node:stream', 'node:zlib']);
    const res = await transport(get('/json'), AbortSignal.timeout(5_000));
    sameBytes(res.body, JSON_BODY);
  });

  it('defaults to the real globals: node:http on this Node', () => {
    expect(typeof process.getBuiltinModule).toBe('function');
    expect(selectTransport()).not.toBe(fetchTransport);
  });
});

describe('node:http transport reading into BodyBuffers', () => {
  const signal = () => AbortSignal.timeout(5_000);

  it('reads declared, chunked and compressed bodies intact into buffers it takes, and fills a buffer given back again', async () => {
    const bodies = new BodyBuffers();
    for (const path of ['/big', '/chunked', '/compressed/gzip', '/json']) {
      const res = await node({ ...get(path), bodies }, signal());
      sameBytes(res.body, path === '/json' ? JSON_BODY : BIG_BODY);
      bodies.give(res.body);
    }
    const first = await node({ ...get('/big'), bodies }, signal());
    const buffer = first.body.buffer;
    bodies.give(first.body);
    const again = await node({ ...get('/chunked'), bodies }, signal());
    expect(again.body.buffer).toBe(buffer);
    sameBytes(again.body, BIG_BODY);
  });

  it('gives the buffer back when it refuses an answer past the size limit, and reads the next one intact', async () => {
    const taken: ArrayBufferLike[] = [];
    const bodies = new (class extends BodyBuffers {
      override take(bytes: number): Uint8Array {
        const room = super.take(bytes);
        taken.push(room.buffer);
        return room;
      }
    })();
    expect((await rejection(node({ ...get('/past-limit-chunked'), bodies }, signal()))).name).toBe(new ResponseTooLargeError().name);
    // The refused answer's last (largest) buffer is back, and handed out first.
    const refused = taken[taken.length - 1];
    expect(bodies.take(1).buffer === refused, 'the refused answer\'s buffer is handed out again').toBe(true); // toBe on two 70 MB buffers would print them
    const next = await node({ ...get('/big'), bodies }, signal());
    sameBytes(next.body, BIG_BODY);
  });
});

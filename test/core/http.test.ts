import { getEventListeners, once } from 'node:events';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PayError } from '../../src/index.js';
import { resolveConfig, type HttpPolicy } from '../../src/core/config.js';
import { callUpstream } from '../../src/core/http.js';
import { BodyDecodingError } from '../../src/core/transport/decompress.js';
import { startLocalServer, type LocalServer } from '../helpers/local-server.js';
import { stepWallClockBack } from '../helpers/wall-clock.js';
import { gzipSync } from 'node:zlib';
import { MAX_RESPONSE_BYTES } from '../../src/core/transport/limit.js';

const BOMB = gzipSync(Buffer.alloc(MAX_RESPONSE_BYTES + 1, 0x20), { level: 9 });
/** 68 MiB unpacked from 69 KB: a time-out during its unpacking left undici's body read pending for ever. */
const SLOW_BOMB = gzipSync(Buffer.alloc(68 * 2 ** 20, 0x20), { level: 9 });

const hits = new Map<string, number>();
/** Called at the next request to /unavailable: lets a test act while a call is surely under way. */
let onUnavailable: (() => void) | undefined;
let local: LocalServer;
let base: string;

beforeAll(async () => {
  local = await startLocalServer((req, res) => {
    hits.set(req.url!, (hits.get(req.url!) ?? 0) + 1);
    switch (req.url) {
      case '/corrupt':
        return res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end('{"not":"gzip"}');
      case '/unavailable':
        onUnavailable?.();
        onUnavailable = undefined;
        return res.writeHead(503, { 'content-type': 'text/plain' }).end('try later');
      case '/unavailable-then-slow':
        // The first answer at once, the next ones after 50 ms: an attempt with less time than that times out.
        return void setTimeout(() => res.writeHead(503, { 'content-type': 'text/plain' }).end('try later'), hits.get(req.url) === 1 ? 0 : 50);
      case '/hang':
        return; // never answers
      case '/slow-503':
        return void setTimeout(() => res.writeHead(503, { 'content-type': 'text/plain' }).end('busy'), 400);
      case '/retry-later':
        return res.writeHead(503, { 'content-type': 'text/plain', 'retry-after': '5' }).end('try in 5 s');
      case '/bomb':
        return res.writeHead(502, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(BOMB);
      case '/slow-bomb':
        return res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(SLOW_BOMB);
      case '/cut':
        // Promises 100 bytes, sends 10, then drops the connection.
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
        res.write('{"items":[');
        return void setTimeout(() => res.destroy(), 10);
      case '/echo-key':
        // A gateway that quotes the credential it was sent, on a status that is retried.
        return res.writeHead(503, { 'content-type': 'text/plain' }).end(`bad key ${String(req.headers['x-api-key'])}`);
      case '/retry-in-2':
        return res.writeHead(503, { 'content-type': 'text/plain', 'retry-after': '2' }).end('try in 2 s');
      case '/headers':
        return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(req.headers));
      default:
        return res.writeHead(404).end();
    }
  });
  base = local.base;
});

afterAll(() => local.close());

/** The configured policy with two retries and quick back-off. */
const policy = (http: Partial<HttpPolicy> = {}) => resolveConfig({ env: {}, http: { maxRetries: 2, backoffBaseMs: 5, backoffMaxMs: 10, ...http } }).http;
const get = (path: string) => ({ service: 'commerce', method: 'GET', url: `${base}${path}` });

describe('callUpstream', () => {
  it('retries a 503 up to maxRetries (so the counts below would show a retry)', async () => {
    const res = await callUpstream(get('/unavailable'), policy());
    expect(res.status).toBe(503);
    expect(hits.get('/unavailable')).toBe(3);
  });

  it('leaves no abort listener on the caller’s signal after its retries (a long sync would pile them up)', async () => {
    hits.delete('/unavailable');
    const signal = new AbortController().signal;
    const res = await callUpstream({ ...get('/unavailable'), signal }, policy({ maxRetries: 4 }));
    expect(res.status).toBe(503);
    expect(hits.get('/unavailable')).toBe(5);
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  it('keeps its total deadline in real time: a wall clock stepped back (NTP, a resumed VM) does not stretch it', async () => {
    hits.delete('/unavailable');
    // Stepped at the first attempt: a timer could fire after the call, which gives up early when its next back-off would pass the deadline.
    const clock = stepWallClockBack(3_600_000);
    onUnavailable = clock.step;
    let stepped: boolean;
    try {
      // Back-off with full jitter of up to 200-400 ms: the ten retries would take seconds, far past the 300 ms deadline.
      const res = await callUpstream(get('/unavailable'), policy({ maxRetries: 10, totalTimeoutMs: 300, backoffBaseMs: 200, backoffMaxMs: 400 }));
      expect(res.status).toBe(503);
    } finally {
      onUnavailable = undefined;
      stepped = clock.restore();
    }
    expect(stepped).toBe(true); // the clock did step during the retries
    expect(hits.get('/unavailable')).toBeLessThan(9); // 11 (every retry) when the step stretched the deadline
  });

  it('answers the last 503 when a back-off overslept the deadline, instead of starting an attempt doomed to time out', async () => {
    hits.delete('/unavailable-then-slow');
    const started = performance.now();
    // A busy event loop, as on a loaded machine: the debug line before the back-off blocks until the deadline is ~5 ms away.
    const busyUntilDeadline = { info() {}, warn() {}, error() {}, debug() {
      while (performance.now() < started + 195);
    } };
    const res = await callUpstream(get('/unavailable-then-slow'), policy({ totalTimeoutMs: 200 }), busyUntilDeadline);
    expect(res.status).toBe(503);
    expect(hits.get('/unavailable-then-slow')).toBe(1);
  });

  it('answers the last 503 rather than start an attempt with less time left than the service took to answer', async () => {
    hits.delete('/slow-503');
    // 503s 400 ms apart in a 1,000 ms deadline: the third attempt would have about 200 ms, and time out.
    const res = await callUpstream(get('/slow-503'), policy({ totalTimeoutMs: 1_000 }));
    expect(res.status).toBe(503);
    expect(Buffer.from(res.body).toString()).toBe('busy');
    expect(hits.get('/slow-503')).toBe(2);
  });

  it('redacts the call\'s secrets from the last answer of a call that ran out of retries, as from one never retried', async () => {
    const res = await callUpstream({ ...get('/echo-key'), headers: { 'x-api-key': 'sk_live_abc' }, secrets: ['sk_live_abc'] }, policy());
    expect(res.status).toBe(503);
    expect(Buffer.from(res.body).toString()).toBe('bad key [redacted]');
  });

  it('answers at once a Retry-After longer than http.retryAfterMaxMs, instead of waiting it out within the deadline', async () => {
    hits.delete('/retry-in-2');
    const started = Date.now();
    const res = await callUpstream(get('/retry-in-2'), policy({ retryAfterMaxMs: 1_000, totalTimeoutMs: 10_000 }));
    expect(res.status).toBe(503);
    expect(hits.get('/retry-in-2')).toBe(1);
    // Not a speed check: it guards against sitting out the 2 s asked for.
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('waits between retries no longer than backoffMaxMs, and not all alike (full jitter, so instances do not retry in step)', async () => {
    const waits: number[] = [];
    const recording = { info() {}, warn() {}, error() {}, debug: (fields: { retryInMs?: number }) => void (fields.retryInMs !== undefined && waits.push(fields.retryInMs)) };
    const res = await callUpstream(get('/unavailable'), policy({ maxRetries: 8, backoffBaseMs: 10, backoffMaxMs: 40 }), recording);
    expect(res.status).toBe(503);
    expect(waits).toHaveLength(8);
    for (const wait of waits) expect(wait).toBeLessThanOrEqual(40);
    expect(new Set(waits.slice(2)).size).toBeGreaterThan(1);
  });

  it('names the total deadline, not the attempt time-out, when the deadline cut the attempt short', async () => {
    const started = Date.now();
    const error = await callUpstream(get('/hang'), policy({ totalTimeoutMs: 150, attemptTimeoutMs: 10_000 })).then(() => undefined, (e: unknown) => e);
    // Not a speed check: the attempt must end with the deadline, not run its own 10 s.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(error).toBeInstanceOf(PayError);
    expect((error as PayError).code).toBe('UPSTREAM_TIMEOUT');
    expect((error as PayError).message).toBe(`commerce GET /hang did not answer within the 150 ms the call has in all, retries included. Raise http.totalTimeoutMs if the service is slow.`);
  });

  it('names the attempt time-out when it is as long as the total: raising the total alone would change nothing', async () => {
    const error = await callUpstream(get('/hang'), policy({ totalTimeoutMs: 150, attemptTimeoutMs: 150, maxRetries: 0 })).then(() => undefined, (e: unknown) => e);
    expect((error as PayError).message).toBe('commerce GET /hang did not answer within 150 ms. Raise http.attemptTimeoutMs if the service is slow.');
  });

  it('names a time-out a reconcile cut to what its budget had left in whole milliseconds', async () => {
    const cut = { ...policy({ maxRetries: 0 }), totalTimeoutMs: 149.997967, attemptTimeoutMs: 149.997967 };
    const error = await callUpstream(get('/hang'), cut).then(() => undefined, (e: unknown) => e);
    expect((error as PayError).message).toBe('commerce GET /hang did not answer within 150 ms. Raise http.attemptTimeoutMs if the service is slow.');
  });

  it('does not start a back-off wait on a signal already aborted', async () => {
    hits.delete('/retry-later');
    const controller = new AbortController();
    // The retry line is logged just before the wait: aborting there is "aborted before the wait starts".
    const abortOnRetry = { info() {}, error() {}, warn() {}, debug: () => controller.abort(new Error('sync cancelled')) };
    const started = Date.now();
    const error = await callUpstream({ ...get('/retry-later'), signal: controller.signal }, policy(), abortOnRetry).then(() => undefined, (e: unknown) => e);
    expect((error as Error).message).toBe('sync cancelled');
    // Retry-After asked for 5 s; the aborted signal must cut that short.
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(hits.get('/retry-later')).toBe(1);
  }, 3_000);

  it.each(['auto', 'fetch'] as const)('rejects with the signal’s own reason when the caller aborts during an attempt (transport %s), as fetch does: no upstream error', async (transport) => {
    hits.delete('/unavailable');
    const controller = new AbortController();
    const reason = new Error('shopper left');
    onUnavailable = () => controller.abort(reason); // the request has reached the service: the attempt is under way
    const error = await callUpstream({ ...get('/unavailable'), signal: controller.signal }, policy({ transport })).then(() => undefined, (e: unknown) => e);
    expect(error).toBe(reason); // was a 502 UPSTREAM_UNREACHABLE, which reads as an outage
    expect(hits.get('/unavailable')).toBe(1);
  });

  it.each(['auto', 'fetch'] as const)('a body that does not decompress (transport %s): UPSTREAM_INVALID_RESPONSE naming the Content-Encoding, not retried', async (transport) => {
    hits.delete('/corrupt');
    const error = await callUpstream(get('/corrupt'), policy({ transport })).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(PayError);
    const payError = error as PayError;
    expect(payError.code).toBe('UPSTREAM_INVALID_RESPONSE');
    expect(payError.message).toContain('GET /corrupt');
    expect(payError.message).toContain('Content-Encoding: gzip');
    expect(payError.details).toEqual({ service: 'commerce' });
    expect(payError.cause).toBeInstanceOf(BodyDecodingError);
    expect(hits.get('/corrupt')).toBe(1);
  });

  it.each(['auto', 'fetch'] as const)('an answer past the size limit (transport %s): UPSTREAM_INVALID_RESPONSE, not retried, not passed on', async (transport) => {
    hits.delete('/bomb');
    const error = await callUpstream(get('/bomb'), policy({ transport })).then(() => undefined, (e: unknown) => e);
    expect(error).toMatchObject({ code: 'UPSTREAM_INVALID_RESPONSE', status: 502, details: { service: 'commerce' } });
    expect((error as Error).message).toContain('GET /bomb');
    expect((error as Error).message).toContain('longer than 64 MiB');
    expect(hits.get('/bomb')).toBe(1);
  });

  it.each(['auto', 'fetch'] as const)('ends with its time-out or its caller\'s abort while a compressed answer is being unpacked (transport %s): undici could leave the read pending for ever', async (transport) => {
    const never = new Promise<string>((resolve) => setTimeout(() => resolve('still pending after 5 s'), 5_000).unref());
    const settled = (call: Promise<unknown>) => Promise.race([call.then(() => 'answered', (e: unknown) => (e as { code?: string }).code ?? e), never]);
    // Each time-out falls at another point of the unpacking.
    for (const attemptTimeoutMs of [30, 60, 90]) {
      const outcome = await settled(callUpstream(get('/slow-bomb'), policy({ transport, maxRetries: 0, attemptTimeoutMs, totalTimeoutMs: 1_000 })));
      expect([attemptTimeoutMs, outcome]).toEqual([attemptTimeoutMs, expect.stringMatching(/^UPSTREAM_(TIMEOUT|INVALID_RESPONSE)$/)]);
    }
    const stop = new AbortController();
    const reason = new Error('the caller stopped');
    setTimeout(() => stop.abort(reason), 40);
    expect(await settled(callUpstream({ ...get('/slow-bomb'), signal: stop.signal }, policy({ transport, maxRetries: 0, attemptTimeoutMs: 10_000 })))).toBe(reason);
  }, 30_000);

  it.each(['auto', 'fetch'] as const)('an answer cut off half-way (transport %s): UPSTREAM_INVALID_RESPONSE saying so, retried like a reset', async (transport) => {
    hits.delete('/cut');
    const error = await callUpstream(get('/cut'), policy({ transport })).then(() => undefined, (e: unknown) => e);
    expect(error).toMatchObject({ code: 'UPSTREAM_INVALID_RESPONSE', status: 502, details: { service: 'commerce' } });
    expect((error as Error).message).toMatch(/^The commerce service began answering GET \/cut, but the connection closed before the answer ended \((ECONNRESET|UND_ERR_SOCKET)\)\.$/);
    expect(hits.get('/cut')).toBe(3); // a GET may run again: the first try and two retries
  });

  it.each(['auto', 'fetch'] as const)('an answer reset half-way, or garbled half-way (transport %s): a cut, retried, and the retry read', async (transport) => {
    // Each connection answers the next way in the list: reset after part of the body, a malformed chunk, then whole.
    const ways = ['reset', 'bad-chunk', 'whole'];
    let connections = 0;
    const flaky = createTcpServer((socket) => {
      const way = ways[connections++];
      socket.once('data', () => {
        if (way === 'reset') {
          socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"items":[');
          setTimeout(() => socket.resetAndDestroy(), 20);
        } else if (way === 'bad-chunk') {
          socket.end('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"ok"\r\nzz\r\n');
        } else {
          socket.end('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\nConnection: close\r\n\r\n{"ok":true}');
        }
      });
    });
    flaky.listen(0, '127.0.0.1');
    await once(flaky, 'listening');
    const retries: unknown[] = [];
    const logger = { info() {}, error() {}, warn() {}, debug: (fields: unknown) => void retries.push(fields) };
    try {
      const url = `http://127.0.0.1:${(flaky.address() as AddressInfo).port}/status`;
      const response = await callUpstream({ service: 'payment', method: 'GET', url }, policy({ transport }), logger);
      expect(Buffer.from(response.body).toString()).toBe('{"ok":true}');
      expect(connections).toBe(3);
      expect(retries).toEqual([expect.objectContaining({ code: 'UPSTREAM_INVALID_RESPONSE' }), expect.objectContaining({ code: 'UPSTREAM_INVALID_RESPONSE' })]);
      // Not sent twice when it must not run twice: the reset comes after the request went out.
      ways.splice(0, ways.length, 'reset');
      connections = 0;
      const error = await callUpstream({ service: 'payment', method: 'POST', url, body: '{}', idempotent: false }, policy({ transport })).then(() => undefined, (e: unknown) => e);
      expect(error).toMatchObject({ code: 'UPSTREAM_INVALID_RESPONSE' });
      expect((error as Error).message).toContain('began answering POST /status, but the connection closed before the answer ended');
      expect(connections).toBe(1);
    } finally {
      flaky.close();
    }
  });

  it('headers past node:http\'s limit: UPSTREAM_INVALID_RESPONSE saying so, not "not HTTP"', async () => {
    const huge = createTcpServer((socket) => socket.once('data', () => socket.end(`HTTP/1.1 200 OK\r\nX-Big: ${'x'.repeat(20_000)}\r\n\r\n`)));
    huge.listen(0, '127.0.0.1');
    await once(huge, 'listening');
    try {
      const url = `http://127.0.0.1:${(huge.address() as AddressInfo).port}/big-headers`;
      const error = await callUpstream({ service: 'commerce', method: 'GET', url }, policy({ transport: 'auto' })).then(() => undefined, (e: unknown) => e);
      expect(error).toMatchObject({ code: 'UPSTREAM_INVALID_RESPONSE', details: { service: 'commerce' } });
      expect((error as PayError).details?.notHttp).toBeUndefined();
      expect((error as Error).message).toContain('with headers larger than Node accepts (HPE_HEADER_OVERFLOW');
    } finally {
      huge.close();
    }
  });

  it.each(['auto', 'fetch'] as const)('an answer that is not HTTP (transport %s): UPSTREAM_INVALID_RESPONSE naming the URL setting, not retried', async (transport) => {
    // Another protocol on the configured port (an SSH daemon, say).
    let connections = 0;
    const ssh = createTcpServer((socket) => {
      connections += 1;
      socket.once('data', () => socket.end('SSH-2.0-OpenSSH_9.2\r\n\r\n'));
    });
    ssh.listen(0, '127.0.0.1');
    await once(ssh, 'listening');
    try {
      const url = `http://127.0.0.1:${(ssh.address() as AddressInfo).port}/rest/V1/orders`;
      const error = await callUpstream({ service: 'commerce', method: 'GET', url }, policy({ transport })).then(() => undefined, (e: unknown) => e);
      expect(error).toMatchObject({ code: 'UPSTREAM_INVALID_RESPONSE', status: 502, details: { service: 'commerce', notHttp: true } });
      expect((error as Error).message).toMatch(/answered GET \/rest\/V1\/orders with something that is not HTTP \((HPE_[A-Z_]+|HTTPParserError)\)/);
      expect((error as Error).message).toContain('Check COMMERCE_URL (commerce.url)');
      expect(connections).toBe(1);
    } finally {
      ssh.close();
    }
  });

  it.each([
    ['auto', '600 Broken', 'which is not a final HTTP status (200 to 599)'],
    ['fetch', '600 Broken', 'which is not a final HTTP status (200 to 599)'],
    ['auto', '099 Odd', 'which is not a final HTTP status (200 to 599)'],
    ['auto', '101 Switching Protocols', 'which is not a final HTTP status (200 to 599)'],
    ['auto', '304 Not Modified', 'which a call like this never expects'],
    ['fetch', '304 Not Modified', 'which a call like this never expects'],
  ] as const)('an answer with a status no refusal can carry (transport %s, HTTP %s): UPSTREAM_INVALID_RESPONSE at once, not passed on', async (transport, statusLine, says) => {
    // Passed on as a refusal, 600 made a Fetch Response throw in the App Router; a 101 waited out the time-out.
    let connections = 0;
    const odd = createTcpServer((socket) => {
      connections += 1;
      const body = statusLine.startsWith('304') ? '' : 'no'; // a 304 has no body
      socket.once('data', () => socket.write(`HTTP/1.1 ${statusLine}\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n${body}`));
    });
    odd.listen(0, '127.0.0.1');
    await once(odd, 'listening');
    try {
      const url = `http://127.0.0.1:${(odd.address() as AddressInfo).port}/api/v1/checkout/init`;
      const started = Date.now();
      const error = await callUpstream({ service: 'payment', method: 'POST', url, body: '{}' }, policy({ transport, attemptTimeoutMs: 5_000 })).then(() => undefined, (e: unknown) => e);
      expect(error).toMatchObject({ code: 'UPSTREAM_INVALID_RESPONSE', status: 502, details: { service: 'payment', upstreamStatus: Number(statusLine.slice(0, 3)) } });
      expect((error as Error).message).toContain(`answered POST /api/v1/checkout/init with HTTP ${Number(statusLine.slice(0, 3))}, ${says}`);
      expect((error as Error).message).toContain('Check PAY_API_URL (payment.apiUrl)');
      expect(connections).toBe(1);
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      odd.close();
    }
  });

  it.each(['auto', 'fetch'] as const)('times out a hung service when the caller passes a signal, garbage collections or not (transport %s)', async (transport) => {
    // On Node 20, AbortSignal.any held AbortSignal.timeout() weakly: after a collection the attempt waited for ever.
    const hung = createTcpServer(() => {});
    hung.listen(0, '127.0.0.1');
    await once(hung, 'listening');
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const collecting = setInterval(gc, 20);
    try {
      const url = `http://127.0.0.1:${(hung.address() as AddressInfo).port}/rest/V1/orders`;
      const signal = new AbortController().signal;
      const error = await callUpstream({ service: 'commerce', method: 'GET', url, signal }, policy({ transport, attemptTimeoutMs: 300, totalTimeoutMs: 600, maxRetries: 0 })).then(() => undefined, (e: unknown) => e);
      expect(error).toMatchObject({ code: 'UPSTREAM_TIMEOUT' });
    } finally {
      clearInterval(collecting);
      hung.close();
    }
  }, 5_000);

  it('says fetch refuses a port browsers block, where it would only say "fetch failed"', async () => {
    const error = await callUpstream({ service: 'payment', method: 'GET', url: 'http://127.0.0.1:6000/api/v1/x' }, policy({ transport: 'fetch', maxRetries: 0 })).then(() => undefined, (e: unknown) => e as PayError);
    expect(error?.code).toBe('UPSTREAM_UNREACHABLE');
    expect(error?.message).toMatch(/fetch refuses to connect to port 6000 .* one of the ports browsers block\. Check PAY_API_URL.*http\.transport 'auto'/);
  });

  it("http.transport 'fetch' sends through fetch, 'auto' through node:http on Node", async () => {
    // fetch adds Sec-Fetch-Mode to every request; node:http never does.
    const headersSent = async (transport: HttpPolicy['transport']) =>
      JSON.parse(Buffer.from((await callUpstream(get('/headers'), policy({ transport }))).body).toString('utf8')) as Record<string, string>;
    expect((await headersSent('fetch'))['sec-fetch-mode']).toBe('cors');
    expect((await headersSent('auto'))['sec-fetch-mode']).toBeUndefined();
  });
});

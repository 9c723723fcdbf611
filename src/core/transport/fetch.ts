import { BodyDecodingError } from './decompress.js';
import type { Transport } from './index.js';
import { readLimited } from '../read-limited.js';
import { ResponseCutError } from './response-cut.js';
import { declaredTooLarge, hasBody, MAX_RESPONSE_BYTES, ResponseTooLargeError } from './limit.js';

/** The Fetch API: edge runtimes and any runtime without node:http. */
export const fetchTransport: Transport = async (request, signal) => {
  const res = await fetch(request.url, { method: request.method, headers: request.headers ?? {}, body: request.body ?? null, signal, redirect: 'manual' });
  let bytes: Uint8Array;
  try {
    // Reading the body under the same signal makes the time-out cover a body that trickles or hangs.
    bytes = await readBounded(res, hasBody(request.method, res.status));
  } catch (error) {
    if (error instanceof ResponseTooLargeError) throw error;
    const encoding = res.headers.get('content-encoding');
    // A body that does not decompress is the same answer as on node:http: not a lost connection.
    if (encoding && !signal.aborted && /^(Z_|ERR_.*BROTLI)/.test(String((error as { cause?: { code?: unknown } }).cause?.code ?? ''))) {
      throw new BodyDecodingError(encoding, error);
    }
    // Our own time-out or the caller's abort stays what it is; anything else broke the answer off.
    throw signal.aborted ? error : new ResponseCutError(error);
  }
  return { status: res.status, ok: res.ok, headers: res.headers, body: bytes };
};

/** The body, decompressed, in a buffer of its own (as node:http's), refused once past MAX_RESPONSE_BYTES. */
async function readBounded(res: Response, withBody: boolean): Promise<Uint8Array> {
  const tooLarge = () => new ResponseTooLargeError();
  if (withBody && declaredTooLarge(res.headers.get('content-length')) && !res.headers.has('content-encoding')) {
    await res.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  const body = await readLimited(res.body, MAX_RESPONSE_BYTES, tooLarge);
  // A single chunk may be a view into a larger buffer that a caller reading `.buffer` would see.
  return body.byteOffset === 0 && body.byteLength === body.buffer.byteLength ? body : body.slice();
}

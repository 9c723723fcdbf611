import { BodyDecodingError } from './decompress.js';
import type { Transport } from './index.js';
import { declaredTooLarge, MAX_RESPONSE_BYTES, ResponseTooLargeError } from './limit.js';

/** The Fetch API: edge runtimes and any runtime without node:http. */
export const fetchTransport: Transport = async (request, signal) => {
  const res = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body, signal, redirect: 'manual' });
  let bytes: Uint8Array;
  try {
    // Reading the body under the same signal makes the time-out cover a body that trickles or hangs.
    bytes = await readBounded(res);
  } catch (error) {
    if (error instanceof ResponseTooLargeError) throw error;
    const encoding = res.headers.get('content-encoding');
    // A body that does not decompress is the same answer as on node:http: not a lost connection.
    if (encoding && !signal.aborted && /^(Z_|ERR_.*BROTLI)/.test(String((error as { cause?: { code?: unknown } }).cause?.code ?? ''))) {
      throw new BodyDecodingError(encoding, error);
    }
    throw error;
  }
  return { status: res.status, ok: res.ok, headers: res.headers, body: bytes };
};

/** The body, decompressed, refused once past MAX_RESPONSE_BYTES (the stream is cancelled there). */
async function readBounded(res: Response): Promise<Uint8Array> {
  if (declaredTooLarge(res.headers.get('content-length')) && !res.headers.has('content-encoding')) {
    await res.body?.cancel();
    throw new ResponseTooLargeError();
  }
  if (!res.body) return new Uint8Array(0);
  // A reader, not `for await`: edge runtimes do not all make a ReadableStream async-iterable.
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    length += read.value.byteLength;
    if (length > MAX_RESPONSE_BYTES) {
      await reader.cancel().catch(() => {});
      throw new ResponseTooLargeError();
    }
    chunks.push(read.value);
  }
  const bytes = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

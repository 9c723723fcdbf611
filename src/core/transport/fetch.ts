import { BodyDecodingError } from './decompress.js';
import type { Transport } from './index.js';

/** The Fetch API: edge runtimes and any runtime without node:http. */
export const fetchTransport: Transport = async (request, signal) => {
  const res = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body, signal, redirect: 'manual' });
  let bytes: ArrayBuffer;
  try {
    // Reading the body under the same signal makes the time-out cover a body that trickles or hangs.
    bytes = await res.arrayBuffer();
  } catch (error) {
    const encoding = res.headers.get('content-encoding');
    // A body that does not decompress is the same answer as on node:http: not a lost connection.
    if (encoding && !signal.aborted && /^(Z_|ERR_.*BROTLI)/.test(String((error as { cause?: { code?: unknown } }).cause?.code ?? ''))) {
      throw new BodyDecodingError(encoding, error);
    }
    throw error;
  }
  return { status: res.status, ok: res.ok, headers: res.headers, body: new Uint8Array(bytes) };
};

import type { Transport } from './index.js';

/** The Fetch API: edge runtimes and any runtime without node:http. */
export const fetchTransport: Transport = async (request, signal) => {
  const res = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body, signal, redirect: 'manual' });
  // Reading the body under the same signal makes the time-out cover a body that trickles or hangs.
  const body = new Uint8Array(await res.arrayBuffer());
  return { status: res.status, ok: res.ok, headers: res.headers, body };
};

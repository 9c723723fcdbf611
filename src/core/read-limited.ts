export interface ReadLimitedOptions {
  /**
   * Past the limit, keep reading in the background and drop what comes (a request body), instead of
   * cancelling the stream (an upstream answer). A request's server holds the connection until its body
   * has been read: cancelled, a keep-alive connection never takes its next request.
   */
  drainPastLimit?: boolean;
}

/**
 * A web stream's bytes, joined, or `tooLarge()` once past `limit`: nothing past it is buffered. One
 * chunk comes back as it is. A reader rather than `for await`: not every edge runtime makes a
 * ReadableStream async-iterable.
 */
export async function readLimited(stream: ReadableStream<Uint8Array> | null, limit: number, tooLarge: () => Error, options: ReadLimitedOptions = {}): Promise<Uint8Array> {
  if (!stream) return new Uint8Array(0);
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    size += read.value.byteLength;
    if (size > limit) {
      if (options.drainPastLimit) void drain(reader);
      else await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(read.value);
  }
  if (chunks.length === 1) return chunks[0]!;
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

/**
 * Reads a stream to its end in the background, keeping nothing: a request body whose answer is already decided, so
 * that its connection can take the next request.
 */
export function discard(stream: ReadableStream<Uint8Array>): void {
  void drain(stream.getReader());
}

/** Reads to the end, keeping nothing; the 413 goes out meanwhile, as the Node bridge's `req.resume()` lets it. */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  try {
    while (!(await reader.read()).done);
  } catch {
    // The client went away: nothing left to drain.
  }
}

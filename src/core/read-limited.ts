/**
 * A web stream's bytes, joined, or `tooLarge()` once past `limit`: the stream is cancelled there, not
 * buffered further. One chunk comes back as it is. A reader rather than `for await`: not every edge
 * runtime makes a ReadableStream async-iterable.
 */
export async function readLimited(stream: ReadableStream<Uint8Array> | null, limit: number, tooLarge: () => Error): Promise<Uint8Array> {
  if (!stream) return new Uint8Array(0);
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    size += read.value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
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

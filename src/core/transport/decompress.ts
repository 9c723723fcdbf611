import type { Transform } from 'node:stream';
import type { ZlibOptions } from 'node:zlib';

type Zlib = Pick<typeof import('node:zlib'), 'createGunzip' | 'createInflate' | 'createInflateRaw' | 'createBrotliDecompress' | 'constants'>;
/** node:stream's Transform, passed in like zlib: the core imports no Node module by name (edge runtimes have none). */
type TransformClass = typeof import('node:stream').Transform;

/** A body the upstream sent compressed that does not decompress: an answer, but not a usable one. */
export class BodyDecodingError extends Error {
  constructor(readonly encoding: string, cause: unknown) {
    super(`the body could not be decompressed (Content-Encoding: ${encoding})`, { cause });
    this.name = 'BodyDecodingError';
  }
}

/**
 * The decoders that undo a Content-Encoding, in the order the body goes through them (the last coding
 * applied first: `gzip, br` is br over gzip). Streams, so an answer is decompressed and counted as it
 * arrives, and one that expands without end is stopped early. Like fetch, a stream cut short yields what
 * it holds; no coding, or one this does not know, leaves the bytes as sent (no decoders).
 */
export function createDecoders(zlib: Zlib, Transform: TransformClass): (encoding: string | undefined) => Transform[] {
  const flush = { finishFlush: zlib.constants.Z_SYNC_FLUSH };
  const brotliFlush = { finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH };
  // A Map, not an object literal: the upstream names the coding, and `'constructor' in {}` is true.
  const decoders = new Map<string, () => Transform>([
    ['gzip', () => zlib.createGunzip(flush)],
    ['x-gzip', () => zlib.createGunzip(flush)],
    ['deflate', () => inflateEither(zlib, Transform, flush)],
    ['br', () => zlib.createBrotliDecompress(brotliFlush)],
  ]);
  return (encoding) => {
    const codings = (encoding ?? '').split(',').map((coding) => coding.trim().toLowerCase()).filter((coding) => coding !== '' && coding !== 'identity');
    if (codings.some((coding) => !decoders.has(coding))) return [];
    return codings.reverse().map((coding) => decoders.get(coding)!());
  };
}

/**
 * `deflate` as servers send it: zlib-wrapped, as HTTP defines it, or raw, as some do (old IIS, hand-rolled
 * gateways). fetch takes both, telling them apart by the first byte (a zlib header's low nibble is 8, CM =
 * deflate); so does this, or the same answer would decode through fetch and fail through node:http.
 */
function inflateEither(zlib: Zlib, Transform: TransformClass, options: ZlibOptions): Transform {
  let inner: Transform | undefined;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (inner === undefined) {
        if (chunk.length === 0) return callback();
        inner = (chunk[0]! & 0x0f) === 0x08 ? zlib.createInflate(options) : zlib.createInflateRaw(options);
        inner.on('data', (data: Buffer) => this.push(data));
        inner.on('end', () => this.push(null));
        inner.on('error', (error) => this.destroy(error));
      }
      inner.write(chunk, callback);
    },
    // The inner stream ends this one once it has given out everything; an empty body has none to wait for.
    final(callback) {
      if (inner === undefined) this.push(null);
      else inner.end();
      callback();
    },
    destroy(error, callback) {
      inner?.destroy();
      callback(error);
    },
  });
}

import type { Transform } from 'node:stream';

type Zlib = Pick<typeof import('node:zlib'), 'createGunzip' | 'createInflate' | 'createBrotliDecompress' | 'constants'>;

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
export function createDecoders(zlib: Zlib): (encoding: string | undefined) => Transform[] {
  const flush = { finishFlush: zlib.constants.Z_SYNC_FLUSH };
  const brotliFlush = { finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH };
  // A Map, not an object literal: the upstream names the coding, and `'constructor' in {}` is true.
  const decoders = new Map<string, () => Transform>([
    ['gzip', () => zlib.createGunzip(flush)],
    ['x-gzip', () => zlib.createGunzip(flush)],
    ['deflate', () => zlib.createInflate(flush)],
    ['br', () => zlib.createBrotliDecompress(brotliFlush)],
  ]);
  return (encoding) => {
    const codings = (encoding ?? '').split(',').map((coding) => coding.trim().toLowerCase()).filter((coding) => coding !== '' && coding !== 'identity');
    if (codings.some((coding) => !decoders.has(coding))) return [];
    return codings.reverse().map((coding) => decoders.get(coding)!());
  };
}

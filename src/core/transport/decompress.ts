import type { ZlibOptions } from 'node:zlib';
import { MAX_RESPONSE_BYTES, ResponseTooLargeError } from './limit.js';

type Zlib = Pick<typeof import('node:zlib'), 'gunzip' | 'inflate' | 'brotliDecompress' | 'constants'>;
type Decode = (body: Buffer, options: ZlibOptions, done: (error: Error | null, result: Buffer) => void) => void;

/** A body the upstream sent compressed that does not decompress: an answer, but not a usable one. */
export class BodyDecodingError extends Error {
  constructor(readonly encoding: string, cause: unknown) {
    super(`the body could not be decompressed (Content-Encoding: ${encoding})`, { cause });
    this.name = 'BodyDecodingError';
  }
}

/**
 * Undoes a Content-Encoding, the last coding applied first (`gzip, br` is br over gzip), off the main
 * thread. Like fetch, a stream cut short yields what it holds; an unknown coding leaves the bytes as sent.
 */
export function createDecompressor(zlib: Zlib): (encoding: string | undefined, body: Buffer) => Promise<Buffer> {
  // Bounded like the bytes that arrive: a small compressed answer may expand without end.
  const flush = { finishFlush: zlib.constants.Z_SYNC_FLUSH, maxOutputLength: MAX_RESPONSE_BYTES };
  const brotliFlush = { finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH, maxOutputLength: MAX_RESPONSE_BYTES };
  const decoders: Record<string, [Decode, ZlibOptions]> = {
    gzip: [zlib.gunzip as Decode, flush],
    'x-gzip': [zlib.gunzip as Decode, flush],
    deflate: [zlib.inflate as Decode, flush],
    br: [zlib.brotliDecompress as Decode, brotliFlush as ZlibOptions],
  };
  const decodeOne = (decoder: [Decode, ZlibOptions], body: Buffer) =>
    new Promise<Buffer>((resolve, reject) => decoder[0](body, decoder[1], (error, result) => (error ? reject(error) : resolve(result))));

  return async (encoding, body) => {
    const codings = (encoding ?? '').split(',').map((coding) => coding.trim().toLowerCase()).filter((coding) => coding !== '' && coding !== 'identity');
    // An empty body (HEAD, 204, 304) has nothing to decompress, whatever the header says.
    if (codings.length === 0 || body.length === 0 || codings.some((coding) => !(coding in decoders))) return body;
    try {
      for (const coding of codings.reverse()) body = await decodeOne(decoders[coding]!, body);
      return body;
    } catch (error) {
      if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw new ResponseTooLargeError();
      throw new BodyDecodingError(encoding!, error);
    }
  };
}

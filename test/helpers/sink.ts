import { Writable } from 'node:stream';

/** A writable stream that keeps what was written, for the CLI's stdout and stderr in tests. */
export function sink(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      text += chunk.toString('utf8');
      callback();
    },
  });
  return { stream, text: () => text };
}

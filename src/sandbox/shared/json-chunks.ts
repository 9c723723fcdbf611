/** Chunks stay below V8's large-object size (128 KiB), past which each string is a mapping of its own. */
const CHUNK_CHARS = 1 << 16;

/**
 * JSON.stringify's text of `value` in chunks, the elements of its array fields joined a few at a time: an unpaged
 * search of 100,000 orders (about 550 MB) is then never one string, which V8 cannot hold (about 512 MiB at most),
 * and a page of orders is not one half-megabyte string allocated apart. One chunk for anything else.
 */
export function jsonChunks(value: unknown): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return [JSON.stringify(value)];
  }
  const chunks: string[] = [];
  let current = '';
  const add = (text: string) => {
    current += text;
    if (current.length >= CHUNK_CHARS) {
      chunks.push(current);
      current = '';
    }
  };
  let separator = '{';
  for (const key of Object.keys(value)) {
    const field = (value as Record<string, unknown>)[key];
    if (Array.isArray(field)) {
      add(`${separator}${JSON.stringify(key)}:[`);
      // As JSON.stringify writes an array's undefined, function or symbol element: null.
      for (let i = 0; i < field.length; i++) add((i > 0 ? ',' : '') + (JSON.stringify(field[i]) ?? 'null'));
      add(']');
    } else {
      const text = JSON.stringify(field);
      if (text === undefined) continue; // a field JSON.stringify leaves out (undefined, a function)
      add(`${separator}${JSON.stringify(key)}:${text}`);
    }
    separator = ',';
  }
  add(separator === '{' ? '{}' : '}');
  if (current !== '') chunks.push(current);
  return chunks;
}

import type { Logger } from '../../src/index.js';

/** An error as pino's serializer shows it: its own properties, message, stack and cause chain (a cause that is not an Error is dropped). */
function serializeError(value: unknown, depth = 0): unknown {
  if (!(value instanceof Error) || depth > 5) return value;
  return { ...value, type: value.name, message: value.message, stack: value.stack, cause: value.cause instanceof Error ? serializeError(value.cause, depth + 1) : undefined };
}

/** A pino-compatible logger that keeps every line as JSON text, to assert on what was logged. */
export function captureLogger(): Logger & { lines: string[]; text(): string } {
  const lines: string[] = [];
  const log = (level: string) => (obj: object, msg?: string) => {
    lines.push(JSON.stringify({ level, msg, ...obj, err: serializeError((obj as { err?: unknown }).err) }));
  };
  return { lines, text: () => lines.join('\n'), debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

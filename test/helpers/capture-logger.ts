import type { Logger } from '../../src/index.js';

/** A pino-compatible logger that keeps every line as JSON text, to assert on what was logged. */
export function captureLogger(): Logger & { lines: string[]; text(): string } {
  const lines: string[] = [];
  const log = (level: string) => (obj: object, msg?: string) => {
    const err = (obj as { err?: unknown }).err;
    lines.push(JSON.stringify({ level, msg, ...obj, err: err instanceof Error ? { message: err.message, stack: err.stack } : err }));
  };
  return { lines, text: () => lines.join('\n'), debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

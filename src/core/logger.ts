import type { Logger } from './types.js';

/** Says nothing: for tools that report in their own words (the CLI, the demo), or to mute the library. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * The default logger: warnings and errors on stderr, the rest unsaid. What needs the operator (a webhook
 * refused because a body parser ate its raw body, a hook that threw, a store that failed) is seen without
 * configuring anything; pass a pino-compatible logger to route it, or `silentLogger` to mute it. The
 * library never gives a logger a secret.
 */
export const consoleLogger: Logger = {
  debug() {},
  info() {},
  warn: (fields, message) => console.warn(`paywidget-server: ${message ?? ''}`, withCause(fields)),
  error: (fields, message) => console.error(`paywidget-server: ${message ?? ''}`, withCause(fields)),
};

/**
 * The fields, with the cause of `err` beside it on Next's edge runtime, whose console prints an Error without its
 * cause (Node's shows it as [cause]): the error a hook threw, under the library's own, would be lost there.
 */
function withCause(fields: object): object {
  const err = (fields as { err?: unknown } | undefined)?.err;
  if (typeof (globalThis as { EdgeRuntime?: unknown }).EdgeRuntime !== 'string' || !(err instanceof Error) || err.cause === undefined || 'cause' in fields) return fields;
  return { ...fields, cause: err.cause };
}

/**
 * The logger with each call guarded. A logger that throws (a broken transport) must not fail a request
 * whose work is done: a token minted, a webhook's handler run and its event marked done (a 500 then
 * would have the sender retry a delivery that is only ever a duplicate). An async logger's rejection is caught
 * too: unhandled, it would end the process. Nothing else can be told.
 */
export function guardedLogger(logger: Logger): Logger {
  const guard = (level: keyof Logger): Logger[keyof Logger] => (fields, message) => {
    try {
      const written: unknown = logger[level](fields, message);
      if (typeof (written as PromiseLike<unknown> | undefined)?.then === 'function') Promise.resolve(written).catch(() => {});
    } catch {
      // the log itself is what failed
    }
  };
  return { debug: guard('debug'), info: guard('info'), warn: guard('warn'), error: guard('error') };
}

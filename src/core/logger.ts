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
  warn: (fields, message) => console.warn(`paywidget-server: ${message ?? ''}`, fields),
  error: (fields, message) => console.error(`paywidget-server: ${message ?? ''}`, fields),
};

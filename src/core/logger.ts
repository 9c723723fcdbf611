import type { Logger } from './types.js';

/** The default logger: says nothing. Pass a pino-compatible one to createPay to hear from the library. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

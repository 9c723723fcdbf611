/**
 * The connection closed after the answer began (status and headers came) and before it ended. Like a
 * reset, it may not happen again: a call that may run twice is retried.
 */
export class ResponseCutError extends Error {
  constructor(cause: unknown) {
    super('the connection closed before the answer ended', { cause });
    this.name = 'ResponseCutError';
  }
}

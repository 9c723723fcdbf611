/**
 * JSON.parse's SyntaxError, without the input: V8 (Node 20+) quotes a snippet of the text in its message,
 * which may be part of a token or secret, and util.inspect prints causes. Only the position survives.
 */
export function jsonSyntaxCause(error: unknown): SyntaxError {
  const message = error instanceof Error ? error.message : '';
  // Anchored at the end: the messages that quote the text end in "is not valid JSON" instead.
  const position = /in JSON at position (\d+)(?: \(line \d+ column \d+\))?$/.exec(message)?.[1];
  if (position !== undefined) return new SyntaxError(`Not valid JSON (error at position ${position})`);
  return new SyntaxError(message.startsWith('Unexpected end of JSON input') ? 'Not valid JSON (the text ends early)' : 'Not valid JSON');
}

import { PayError } from './errors.js';
import type { PayRequest } from './types.js';
import { jsonSyntaxCause } from './json-syntax-cause.js';

const textDecoder = new TextDecoder();

/** The JSON body of a request to a JSON route: a parser's object, the raw bytes parsed, or `{}` when empty. */
export function readJsonBody(request: PayRequest): unknown {
  if (request.parsedBody !== undefined && request.rawBody === undefined) return request.parsedBody;
  const raw = request.rawBody;
  const text = raw === undefined ? '' : typeof raw === 'string' ? raw : textDecoder.decode(raw);
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new PayError('INVALID_JSON', 'The request body is not valid JSON. Send a JSON object with Content-Type: application/json.', { cause: jsonSyntaxCause(error) });
  }
}

export function bodyTooLarge(limit: number, cause?: unknown): PayError {
  return new PayError('BODY_TOO_LARGE', `The request body is larger than the ${limit}-byte limit. Raise maxBodyBytes if your payloads really are this large.`, { cause });
}

import { listenForAbort, untilAborted } from './abort-listeners.js';
import type { HttpPolicy } from './config.js';
import { PayError, UpstreamError } from './errors.js';
import { jsonSyntaxCause } from './json-syntax-cause.js';
import { redactBytes } from './redact-bytes.js';
import { parseRetryAfter } from './retry-after.js';
import { sleep } from './sleep.js';
import type { BodyBuffers } from './transport/body-buffers.js';
import { fetchTransport } from './transport/fetch.js';
import { selectTransport, type Transport, type UpstreamResponse } from './transport/index.js';
import { ResponseCutError } from './transport/response-cut.js';
import type { Logger } from './types.js';
import { invalidAnswer, outOfRange, RAISE_TOTAL_TIMEOUT, redirected, REDIRECTS, systemCodeOf, toTransportError, unexpectedStatus } from './upstream-failures.js';

export type { UpstreamResponse } from './transport/index.js';
export { RAISE_ATTEMPT_TIMEOUT, RAISE_TOTAL_TIMEOUT } from './upstream-failures.js';

export interface UpstreamCall {
  /** Names the service in errors and logs: 'payment' or 'commerce'. */
  service: string;
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string;
  /** Per-call overrides of the configured policy, e.g. no retries for a token call. */
  policy?: Partial<HttpPolicy> | undefined;
  /**
   * False for a call that must not run twice (minting a token): retried only when the service surely did
   * not act on it (the connection was refused, or it answered 429 or 503), never after a time-out, a
   * reset or another 5xx, which can come after the work was done. True by default.
   */
  idempotent?: boolean;
  /**
   * What the call sends that is secret (an API key, a password, a Bearer token): redacted from the body of
   * an answer that is not 2xx, should the service or a gateway in front of it echo the request back, since
   * that body reaches errors, logs and (a mint refusal) the browser.
   */
  secrets?: readonly string[];
  signal?: AbortSignal | undefined;
  /** Buffers to read the answer into, for a caller that gives each body back once read (see BodyBuffers). */
  bodies?: BodyBuffers | undefined;
}

const textDecoder = new TextDecoder();
const autoTransport = selectTransport();

/**
 * One HTTP layer for every upstream call: a time-out per attempt that covers the body, a total
 * deadline, and retries with exponential back-off and full jitter on connection errors, time-outs,
 * 5xx and 429 (honouring Retry-After up to a cap). Other 2xx and 4xx statuses come back as they are; a 1xx,
 * a 3xx (redirects included) or a status past 599 is UPSTREAM_INVALID_RESPONSE, since no upstream call expects one.
 */
export async function callUpstream(call: UpstreamCall, basePolicy: HttpPolicy, logger?: Logger): Promise<UpstreamResponse> {
  const policy = { ...basePolicy, ...call.policy };
  const deadline = performance.now() + policy.totalTimeoutMs; // real time: a step of the wall clock neither ends nor stretches it
  const where = `${call.method} ${new URL(call.url).pathname}`;

  // What the previous attempt came to, should a back-off leave no time for the next one.
  let previous: { response: UpstreamResponse | undefined; failure: PayError } | undefined;
  /** The least time worth an attempt: as long as the last answer took, once there is one to keep. */
  let worthMs = MIN_ATTEMPT_MS;
  for (let attempt = 0; ; attempt++) {
    const remaining = deadline - performance.now();
    // A back-off that overslept (a busy event loop) leaves no time worth an attempt: one doomed to time out
    // would replace the upstream's real answer (a 503, say) with a time-out of our own.
    if (previous && remaining < worthMs) return lastOutcome(call, where, policy, previous.response, previous.failure, remaining);
    const attemptStarted = performance.now();
    let failure: PayError;
    let response: UpstreamResponse | undefined;
    let unsent: boolean;
    try {
      response = await attemptOnce(call, Math.min(policy.attemptTimeoutMs, remaining), policy.transport === 'fetch' ? fetchTransport : autoTransport);
      if (response.status < 200 || response.status > 599) throw outOfRange(call, where, response.status);
      if (REDIRECTS.has(response.status)) throw redirected(call, where, response);
      if (response.status >= 300 && response.status < 400) throw unexpectedStatus(call, where, response.status);
      if (!isRetryableStatus(response.status)) return redactRefusal(response, call.secrets);
      failure = new PayError('UPSTREAM_ERROR', `${call.service} ${where} answered ${response.status}`);
      unsent = response.status === 429 || response.status === 503;
    } catch (error) {
      // The caller's own abort is no upstream failure: like fetch, the call rejects with the signal's reason.
      if (call.signal?.aborted) throw call.signal.reason;
      // The first attempt's `remaining` is the total less a hair: decided on the settings there, so equal ones name the attempt time-out.
      const cutByDeadline = attempt === 0 ? policy.totalTimeoutMs < policy.attemptTimeoutMs : remaining < policy.attemptTimeoutMs;
      failure = toTransportError(error, call, where, policy, cutByDeadline);
      // An answer that does not decompress, or is not HTTP, was an answer: retrying will not fix it. One cut
      // off half-way may come whole next time.
      if (failure.code === 'UPSTREAM_INVALID_RESPONSE' && !(error instanceof ResponseCutError)) throw failure;
      unsent = NOT_CONNECTED.has(systemCodeOf(error) ?? '');
    }

    // An upstream that took 250 ms to answer 503 will not answer in 100: with less left, its 503 is the outcome.
    if (response) worthMs = Math.max(MIN_ATTEMPT_MS, performance.now() - attemptStarted);
    const wait = retryDelay(attempt, response, policy);
    const left = deadline - performance.now();
    if (attempt >= policy.maxRetries || wait === undefined || wait > left - worthMs || (call.idempotent === false && !unsent)) {
      return lastOutcome(call, where, policy, response, failure, left);
    }
    previous = { response, failure };
    // Debug: a retry that works is routine, and one that does not ends in an error its caller reports (during an
    // outage, one warning per retry of every call drowned the lines that say what was lost).
    logger?.debug({ service: call.service, route: where, attempt: attempt + 1, status: response?.status, code: failure.code, retryInMs: Math.round(wait) }, 'upstream call failed; retrying');
    if (!(await sleep(wait, call.signal))) throw call.signal!.reason;
  }
}

/** Less time than this left before the deadline, and no attempt is started: it would time out rather than answer. */
const MIN_ATTEMPT_MS = 20;

/** The end of a call that will not retry: the upstream's last answer (unchanged but for the call's secrets), else its failure. */
function lastOutcome(call: UpstreamCall, where: string, policy: HttpPolicy, response: UpstreamResponse | undefined, failure: PayError, left: number): UpstreamResponse {
  if (response) return redactRefusal(response, call.secrets);
  if (left <= 0 && failure.code !== 'UPSTREAM_TIMEOUT') {
    throw new PayError('UPSTREAM_TIMEOUT', `${call.service} ${where} did not succeed within ${Math.round(policy.totalTimeoutMs)} ms, retries included (the last failure is the cause). Check that the service is up and answering. ${RAISE_TOTAL_TIMEOUT}`, { cause: failure });
  }
  throw failure;
}

/** The answer, with the call's secrets redacted from its body unless it is a 2xx. */
function redactRefusal(response: UpstreamResponse, secrets: readonly string[] | undefined): UpstreamResponse {
  if (response.ok || secrets === undefined) return response;
  const body = redactBytes(response.body, secrets);
  return body === response.body ? response : { ...response, body };
}

/** One attempt; its time-out covers the body too, so a body that trickles or hangs times out. */
async function attemptOnce(call: UpstreamCall, timeoutMs: number, transport: Transport): Promise<UpstreamResponse> {
  // A timer of our own, not AbortSignal.any([signal, AbortSignal.timeout()]): on Node 20 the combined signal
  // holds the time-out weakly, so a garbage collection could drop it and a hung service hang the call for ever.
  const attempt = new AbortController();
  const timer = setTimeout(() => attempt.abort(new DOMException(`The attempt timed out after ${timeoutMs} ms.`, 'TimeoutError')), Math.max(1, timeoutMs));
  const onAbort = () => attempt.abort(call.signal!.reason);
  if (call.signal?.aborted) onAbort();
  else if (call.signal) listenForAbort(call.signal, onAbort);
  try {
    const answer = transport(call, attempt.signal);
    answer.catch(() => {}); // once the attempt ended without it, its late failure is nobody's
    // Ended by its signal whatever the transport does: undici can leave the read of a gzip body pending for
    // ever once aborted, and the call would outlive its time-out, its deadline and the caller's abort.
    return await untilAborted(answer, attempt.signal);
  } finally {
    clearTimeout(timer);
    call.signal?.removeEventListener('abort', onAbort);
  }
}

function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

/** System errors that mean no connection was made, so the request never left. */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

/** Full-jitter exponential back-off, or the server's Retry-After when it sends one. Undefined: do not retry. */
function retryDelay(attempt: number, response: UpstreamResponse | undefined, policy: HttpPolicy): number | undefined {
  const retryAfter = response?.headers.get('retry-after');
  if (retryAfter) {
    const ms = parseRetryAfter(retryAfter);
    if (ms !== undefined) return ms <= policy.retryAfterMaxMs ? ms : undefined;
  }
  const ceiling = Math.min(policy.backoffMaxMs, policy.backoffBaseMs * 2 ** attempt);
  return Math.random() * ceiling;
}

/** A refusal of the credentials that were sent. */
export const refusedCredentials = (status: number): boolean => status === 401 || status === 403;

/** What to check when the payment service refuses the merchant's own credentials. */
export const MERCHANT_CREDENTIALS_HINT = 'Check the merchant credentials: PAY_MERCHANT_ID and PAY_MERCHANT_API_KEY (payment.merchantId and payment.apiKey).';

/**
 * Throws the upstream's refusal as an UpstreamError that keeps its status, content-type, Retry-After and bytes
 * (callUpstream has redacted the call's secrets from them). `credentialsHint` says what to check on a 401
 * or 403, in the message only (the body stays the upstream's).
 */
export function assertOk(service: string, response: UpstreamResponse, credentialsHint?: string): void {
  if (!response.ok) throw upstreamRefusal(service, response, credentialsHint);
}

/** The UpstreamError assertOk throws, for a caller that logs it first. */
export function upstreamRefusal(service: string, response: UpstreamResponse, credentialsHint?: string): UpstreamError {
  const { status } = response;
  const message = credentialsHint !== undefined && refusedCredentials(status) ? `The ${service} service answered HTTP ${status}. ${credentialsHint}` : undefined;
  return new UpstreamError(service, status, response.headers.get('content-type') ?? undefined, response.body, message, response.headers.get('retry-after') ?? undefined);
}

/** Characters of an answer shown in a log line or by the CLI: enough for a JSON error or a proxy's headline, not a whole HTML page. */
const EXCERPT_CHARS = 300;
/** Bytes decoded of an answer (which may hold up to 64 MiB): room for EXCERPT_CHARS characters of four bytes, and runs of spaces. */
const EXCERPT_BYTES = EXCERPT_CHARS * 16;

/**
 * The start of what an upstream said in a refusal, on one line (whitespace runs as one space), its first
 * EXCERPT_CHARS characters; `cut` when it says more. Its secrets were redacted when it was read (callUpstream).
 */
export function answerExcerpt(error: UpstreamError): { text: string; cut: boolean } {
  const characters = [...textDecoder.decode(error.body.subarray(0, EXCERPT_BYTES)).replace(/\s+/g, ' ').trim()];
  return { text: characters.slice(0, EXCERPT_CHARS).join(''), cut: characters.length > EXCERPT_CHARS || error.body.byteLength > EXCERPT_BYTES };
}

/**
 * Parses a JSON body, or throws UPSTREAM_INVALID_RESPONSE saying what came back instead.
 * `what` names the call for people, e.g. 'an order search'.
 */
export function parseJsonBody(service: string, response: UpstreamResponse, what = `HTTP ${response.status}`): unknown {
  const text = textDecoder.decode(response.body);
  try {
    return JSON.parse(text);
  } catch (error) {
    const type = response.headers.get('content-type') ?? 'no content-type';
    throw invalidAnswer(service, `answered ${what} with a body that is not JSON (${type}, ${response.body.length} bytes).`, jsonSyntaxCause(error));
  }
}

import { listenForAbort } from './abort-listeners.js';
import { variableAndOption, type HttpPolicy } from './config.js';
import { PayError, UpstreamError } from './errors.js';
import { jsonSyntaxCause } from './json-syntax-cause.js';
import { redactBytes, redactText } from './redact-bytes.js';
import { parseRetryAfter } from './retry-after.js';
import { sleep } from './sleep.js';
import { BodyDecodingError } from './transport/decompress.js';
import { fetchTransport } from './transport/fetch.js';
import { ResponseTooLargeError } from './transport/limit.js';
import { ResponseCutError } from './transport/response-cut.js';
import { selectTransport, type Transport, type UpstreamResponse } from './transport/index.js';
import type { Logger } from './types.js';

export type { UpstreamResponse } from './transport/index.js';

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
    throw new PayError('UPSTREAM_TIMEOUT', `${call.service} ${where} did not succeed within ${policy.totalTimeoutMs} ms, retries included (the last failure is the cause). Check that the service is up and answering. ${RAISE_TOTAL_TIMEOUT}`, { cause: failure });
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
    return await Promise.race([answer, abortion(attempt.signal)]);
  } finally {
    clearTimeout(timer);
    call.signal?.removeEventListener('abort', onAbort);
  }
}

/** Rejects with the signal's reason when it aborts. */
function abortion(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

/** System errors that mean no connection was made, so the request never left. */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

/** node:http puts the system error's code on the error, fetch on its cause. */
function systemCodeOf(error: unknown): string | undefined {
  const failure = error as { code?: string; cause?: { code?: string } } | null;
  return failure?.code ?? failure?.cause?.code;
}

/** The option holding each service's address, for errors that say to change it. */
const URL_OPTION: Record<string, string> = { payment: 'payment.apiUrl', commerce: 'commerce.url' };

/** Where a service's address is set, as errors name it: `PAY_API_URL (payment.apiUrl)`. */
function urlSetting(service: string): string {
  const option = URL_OPTION[service];
  return option ? variableAndOption(option) : 'the service URL';
}

/** 502 UPSTREAM_INVALID_RESPONSE: the service answered, but not in a way that can be used. `what` follows "The <service> service". */
function invalidAnswer(service: string, what: string, cause?: unknown, details?: Record<string, unknown>): PayError {
  return new PayError('UPSTREAM_INVALID_RESPONSE', `The ${service} service ${what}`, { cause, details: { service, ...details } });
}

/** The 3xx statuses that point elsewhere (with Location); 304 and the others are no redirect. */
const REDIRECTS: ReadonlySet<number> = new Set([300, 301, 302, 303, 307, 308]);

/**
 * A status no final HTTP answer has (a 1xx the transport passed on, 600 and past): not passed on as a
 * refusal, which no framework could send (a Fetch Response throws on it). Never retried.
 */
function outOfRange(call: UpstreamCall, where: string, status: number): PayError {
  return invalidAnswer(call.service, `answered ${where} with HTTP ${status}, which is not a final HTTP status (200 to 599). Check ${urlSetting(call.service)}: it should be the service's API, not a proxy or another server.`, undefined, { upstreamStatus: status });
}

/** A 3xx that is no redirect (304 Not Modified to a request that asked for no cache check, 305, 306): not passed on either. */
function unexpectedStatus(call: UpstreamCall, where: string, status: number): PayError {
  return invalidAnswer(call.service, `answered ${where} with HTTP ${status}, which a call like this never expects. Check ${urlSetting(call.service)}: a cache or proxy may sit in front of the service.`, undefined, { upstreamStatus: status });
}

/**
 * A redirect is not followed (it would carry the credentials to another address), nor passed on as a
 * refusal: the configured address is out of date (http:// for https://, a moved host). Never retried.
 */
function redirected(call: UpstreamCall, where: string, response: UpstreamResponse): PayError {
  const location = response.headers.get('location');
  const setting = urlSetting(call.service);
  let target = 'no Location';
  let advice = `set ${setting} to the service's own address.`;
  try {
    // Origin and path only: a query may carry a token, and so may a path (a gateway's /denied/<api key>), which is redacted.
    const url = location ? new URL(location, call.url) : undefined;
    if (url) {
      const path = redactText(url.pathname, call.secrets ?? []);
      target = `${url.origin}${path}`;
      // The configured base is what comes before the library's own paths: the API moved (http to https, a new
      // host) gives the base to set; another path is something in front of the service, not the service.
      const start = OWN_PATH_START[call.service];
      const at = start === undefined ? -1 : path.indexOf(start);
      advice = at !== -1
        ? `set ${setting} to ${url.origin}${path.slice(0, at)}.`
        : `it does not point to this API's paths${start === undefined ? '' : ` (${start}…)`}: a proxy, a login page or another version of the API may answer there. Set ${setting} to the service's own base URL.`;
    }
  } catch {
    target = 'an unreadable Location';
  }
  return invalidAnswer(call.service, `answered ${where} with a redirect (HTTP ${response.status}) to ${target}. Redirects are not followed, since they would carry the credentials elsewhere: ${advice}`, undefined, {
    upstreamStatus: response.status, redirect: true,
  });
}

/** Where each service's paths begin below its base URL (the configuration refuses a base URL that holds them). */
const OWN_PATH_START: Record<string, string> = { payment: '/api/v1/', commerce: '/rest/' };


/** The advice that ends an UPSTREAM_TIMEOUT message; the CLI, which has no such options, replaces them. */
export const RAISE_ATTEMPT_TIMEOUT = 'Raise http.attemptTimeoutMs if the service is slow.';
export const RAISE_TOTAL_TIMEOUT = 'Raise http.totalTimeoutMs if the service is slow.';

/** `cutByDeadline`: the attempt had less than http.attemptTimeoutMs, what was left of http.totalTimeoutMs. */
function toTransportError(error: unknown, call: UpstreamCall, where: string, policy: HttpPolicy, cutByDeadline: boolean): PayError {
  if (error instanceof PayError) return error;
  if (error instanceof ResponseTooLargeError) return invalidAnswer(call.service, `answered ${where}, but ${error.message}; it was not read further.`, error);
  if (error instanceof BodyDecodingError) return invalidAnswer(call.service, `answered ${where}, but ${error.message}.`, error);
  if (error instanceof ResponseCutError) {
    const systemCode = systemCodeOf(error.cause);
    return invalidAnswer(call.service, `began answering ${where}, but ${error.message}${systemCode ? ` (${systemCode})` : ''}.`, error);
  }
  const name = (error as { name?: string } | null)?.name;
  if (name === 'TimeoutError' || name === 'AbortError') {
    const message = cutByDeadline
      ? `${call.service} ${where} did not answer within the ${policy.totalTimeoutMs} ms the call has in all, retries included. ${RAISE_TOTAL_TIMEOUT}`
      : `${call.service} ${where} did not answer within ${policy.attemptTimeoutMs} ms. ${RAISE_ATTEMPT_TIMEOUT}`;
    return new PayError('UPSTREAM_TIMEOUT', message, { cause: error });
  }
  const systemCode = systemCodeOf(error);
  if (systemCode === 'HPE_HEADER_OVERFLOW') {
    return invalidAnswer(call.service, `answered ${where} with headers larger than Node accepts (${systemCode}; node --max-http-header-size raises the limit).`, error);
  }
  const parserError = systemCode?.startsWith('HPE_') ? systemCode : (error as { cause?: { name?: string } } | null)?.cause?.name === 'HTTPParserError' ? 'HTTPParserError' : undefined;
  if (parserError) {
    // The HTTP parser refused the answer: another protocol on that port (TLS, SSH), not a lost connection.
    // (undici on Node 24 names its parser error without the HPE_ code.)
    return invalidAnswer(call.service, `answered ${where} with something that is not HTTP (${parserError}). Check ${urlSetting(call.service)}: the port, and https:// for a TLS port.`, error, { notHttp: true });
  }
  if ((error as { cause?: { message?: unknown } } | null)?.cause?.message === 'bad port') {
    // fetch will not connect to ports browsers block (6000, 6665-6669, 10080…): no request left.
    const { port } = new URL(call.url);
    return new PayError('UPSTREAM_UNREACHABLE', `fetch refuses to connect to port ${port} of ${call.service} ${where}, one of the ports browsers block. Check ${urlSetting(call.service)}: serve the service on another port, or use http.transport 'auto' (node:http) on Node.`, { cause: error });
  }
  const code = systemCode ? ` (${systemCode})` : '';
  return new PayError('UPSTREAM_UNREACHABLE', `Could not reach the ${call.service} service at ${new URL(call.url).origin}${code}. Check ${urlSetting(call.service)} and that the service is up.`, { cause: error });
}

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
  if (response.ok) return;
  const { status } = response;
  const message = credentialsHint !== undefined && refusedCredentials(status) ? `The ${service} service answered HTTP ${status}. ${credentialsHint}` : undefined;
  throw new UpstreamError(service, status, response.headers.get('content-type') ?? undefined, response.body, message, response.headers.get('retry-after') ?? undefined);
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

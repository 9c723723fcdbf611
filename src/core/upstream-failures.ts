import { variableAndOption, type HttpPolicy } from './config.js';
import { PayError } from './errors.js';
import type { UpstreamCall } from './http.js';
import { redactText } from './redact-bytes.js';
import { BodyDecodingError } from './transport/decompress.js';
import type { UpstreamResponse } from './transport/index.js';
import { ResponseTooLargeError } from './transport/limit.js';
import { ResponseCutError } from './transport/response-cut.js';

/*
 * What went wrong with an upstream call, as the PayError its caller gets: each names the service and the call,
 * and says what to change (which setting, which variable) when the cause is on this side.
 */

/** node:http puts the system error's code on the error, fetch on its cause. */
export function systemCodeOf(error: unknown): string | undefined {
  const failure = error as { code?: string; cause?: { code?: string } } | null;
  return failure?.code ?? failure?.cause?.code;
}

/** The option holding each service's address, for errors that say to change it. */
const URL_OPTION: Record<string, string> = { payment: 'payment.apiUrl', commerce: 'commerce.url' };

/** Where a service's address is set, as errors name it: `PAY_API_URL (payment.apiUrl)`. */
export function urlSetting(service: string): string {
  const option = URL_OPTION[service];
  return option ? variableAndOption(option) : 'the service URL';
}

/** 502 UPSTREAM_INVALID_RESPONSE: the service answered, but not in a way that can be used. `what` follows "The <service> service". */
export function invalidAnswer(service: string, what: string, cause?: unknown, details?: Record<string, unknown>): PayError {
  return new PayError('UPSTREAM_INVALID_RESPONSE', `The ${service} service ${what}`, { cause, details: { service, ...details } });
}

/** The 3xx statuses that point elsewhere (with Location); 304 and the others are no redirect. */
export const REDIRECTS: ReadonlySet<number> = new Set([300, 301, 302, 303, 307, 308]);

/**
 * A status no final HTTP answer has (a 1xx the transport passed on, 600 and past): not passed on as a
 * refusal, which no framework could send (a Fetch Response throws on it). Never retried.
 */
export function outOfRange(call: UpstreamCall, where: string, status: number): PayError {
  return invalidAnswer(call.service, `answered ${where} with HTTP ${status}, which is not a final HTTP status (200 to 599). Check ${urlSetting(call.service)}: it should be the service's API, not a proxy or another server.`, undefined, { upstreamStatus: status });
}

/** A 3xx that is no redirect (304 Not Modified to a request that asked for no cache check, 305, 306): not passed on either. */
export function unexpectedStatus(call: UpstreamCall, where: string, status: number): PayError {
  return invalidAnswer(call.service, `answered ${where} with HTTP ${status}, which a call like this never expects. Check ${urlSetting(call.service)}: a cache or proxy may sit in front of the service.`, undefined, { upstreamStatus: status });
}

/**
 * A redirect is not followed (it would carry the credentials to another address), nor passed on as a
 * refusal: the configured address is out of date (http:// for https://, a moved host). Never retried.
 */
export function redirected(call: UpstreamCall, where: string, response: UpstreamResponse): PayError {
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
export function toTransportError(error: unknown, call: UpstreamCall, where: string, policy: HttpPolicy, cutByDeadline: boolean): PayError {
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
      ? `${call.service} ${where} did not answer within the ${Math.round(policy.totalTimeoutMs)} ms the call has in all, retries included. ${RAISE_TOTAL_TIMEOUT}`
      : `${call.service} ${where} did not answer within ${Math.round(policy.attemptTimeoutMs)} ms. ${RAISE_ATTEMPT_TIMEOUT}`;
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
  const { origin, protocol } = new URL(call.url);
  const tls = systemCode === undefined ? undefined : tlsAdvice(systemCode, messageOf(error), protocol, urlSetting(call.service));
  if (tls) return new PayError('UPSTREAM_UNREACHABLE', `Could not reach the ${call.service} service at ${origin} (${systemCode}): ${tls}`, { cause: error });
  const code = systemCode ? ` (${systemCode})` : '';
  // A TLS port closes a plain-HTTP connection without a word, which reads as a reset.
  const plainToTls = protocol === 'http:' && (systemCode === 'ECONNRESET' || systemCode === 'UND_ERR_SOCKET') ? ' If that port speaks TLS (it closes a plain http:// connection like this), use https://.' : '';
  return new PayError('UPSTREAM_UNREACHABLE', `Could not reach the ${call.service} service at ${origin}${code}. Check ${urlSetting(call.service)} and that the service is up.${plainToTls}`, { cause: error });
}

/** Node's codes for a certificate it does not accept. */
const CERTIFICATE_CODES: ReadonlySet<string> = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_UNTRUSTED', 'CERT_SIGNATURE_FAILURE', 'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** What to do about a connection TLS ended: the service is up, so "check that it is up" would mislead. */
function tlsAdvice(code: string, message: string, protocol: string, setting: string): string | undefined {
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `its TLS certificate is for another host name. Use the name the certificate is for in ${setting}.`;
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') return `its TLS certificate is out of its dates. Renew it, or check this machine's clock.`;
  if (CERTIFICATE_CODES.has(code)) return 'Node does not trust its TLS certificate. If your own certificate authority signed it, trust it with NODE_EXTRA_CA_CERTS=/path/to/ca.pem (never by turning verification off).';
  // https:// to a plain-HTTP port: the answer to the TLS greeting is not TLS.
  if (protocol === 'https:' && (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || (code === 'EPROTO' && /wrong version number/i.test(message)))) {
    return `that port does not speak TLS. Use http:// in ${setting}, or the port of the service's https:// address.`;
  }
  return undefined;
}

function messageOf(error: unknown): string {
  const failure = error as { message?: unknown; cause?: { message?: unknown } } | null;
  return `${String(failure?.message ?? '')} ${String(failure?.cause?.message ?? '')}`;
}

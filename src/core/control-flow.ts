import type { Framework } from './types.js';

/**
 * The framework's control flow `error` is or wraps, rather than a failure: Next's redirect(), permanentRedirect(),
 * notFound(), forbidden() and unauthorized() throw errors whose `digest` Next's route module reads to answer 307,
 * 308, 404, 403 or 401 itself. Thrown in a hook (authorize, resolveCheckout), it arrives wrapped as the hook's
 * failure (its cause), and is thrown on untouched, for the framework to answer, where a failure of the hook would
 * answer 500. Read by its shape, since the core imports no framework. Only the App Router answers them: elsewhere
 * (a Pages Router API route, Express) they are a hook that failed, answered and logged as such.
 */
export function controlFlowIn(error: unknown, framework: Framework | undefined): unknown {
  if (framework !== 'next-app') return undefined;
  for (const candidate of [error, (error as { cause?: unknown } | null)?.cause]) {
    const digest = typeof candidate === 'object' && candidate !== null ? (candidate as { digest?: unknown }).digest : undefined;
    if (typeof digest === 'string' && /^NEXT_(REDIRECT|HTTP_ERROR_FALLBACK|NOT_FOUND)(;|$)/.test(digest)) return candidate;
  }
  return undefined;
}

import type { Framework } from './types.js';

/**
 * Whether `error` is a framework's control flow rather than a failure: Next's redirect(), permanentRedirect(),
 * notFound(), forbidden() and unauthorized() throw errors whose `digest` Next's route module reads to answer
 * 307, 308, 404, 403 or 401 itself. Thrown in a hook (authorize, resolveCheckout), such an error passes through
 * untouched, for the framework to answer, where a failure of the hook would answer 500. Read by its shape, since
 * the core imports no framework. Only the App Router answers them: elsewhere (a Pages Router API route, Express)
 * they are a hook that failed, answered and logged as such.
 */
export function isControlFlow(error: unknown, framework: Framework | undefined): boolean {
  if (framework !== 'next-app') return false;
  const digest = typeof error === 'object' && error !== null ? (error as { digest?: unknown }).digest : undefined;
  return typeof digest === 'string' && /^NEXT_(REDIRECT|HTTP_ERROR_FALLBACK|NOT_FOUND)(;|$)/.test(digest);
}

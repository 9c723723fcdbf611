import { describe, expect, it } from 'vitest';
import { payMiddleware } from 'paywidget-server/express';
import { payRouter } from 'paywidget-server/koa';
import { createPagesHandler, createRouteHandlers } from 'paywidget-server/next';
import { thrown } from '../helpers/pay-errors.js';

const refusal = (run: () => unknown) => thrown(run, 'the adapter to refuse its argument');

describe('an adapter given something that is neither a Pay instance nor options', () => {
  it.each([
    ['payMiddleware', (value: unknown) => payMiddleware(value as never)],
    ['payRouter', (value: unknown) => payRouter(value as never)],
    ['createRouteHandlers', (value: unknown) => createRouteHandlers(value as never)],
    ['createPagesHandler', (value: unknown) => createPagesHandler(value as never)],
  ])('%s(null) or a string: CONFIG_INVALID saying what to pass, not "Cannot convert undefined or null to object"', (_name, adapter) => {
    for (const [value, kind] of [[null, 'null'], ['/pay', 'a string']] as const) {
      const error = refusal(() => adapter(value));
      expect(error.code).toBe('CONFIG_INVALID');
      expect(error.message).toContain(`the adapter was given ${kind} instead of a Pay instance. Pass the instance createPay() made (payMiddleware(pay)`);
    }
  });
});

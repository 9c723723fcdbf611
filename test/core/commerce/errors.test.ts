import { describe, expect, it } from 'vitest';
import { commerceFailure, formatMagentoMessage, pageSizeCapOf } from '../../../src/core/commerce/errors.js';
import type { UpstreamResponse } from '../../../src/core/http.js';

const answer = (status: number, body: unknown): UpstreamResponse => ({
  status,
  ok: false,
  headers: { get: (name) => (name.toLowerCase() === 'content-type' ? 'application/json; charset=utf-8' : null) },
  body: new TextEncoder().encode(JSON.stringify(body)),
});

describe('formatMagentoMessage: Magento\'s renderer (strtr over the parameter keys, longest first)', () => {
  it('replaces only the keys the parameters have, so a placeholder followed by word characters is still found', () => {
    expect(formatMagentoMessage('Item %1st of %2', ['1', '5'])).toBe('Item 1st of 5');
    expect(formatMagentoMessage('%fieldName_x is %fieldNames', { fieldName: 'a', fieldNames: 'b' })).toBe('a_x is b');
  });

  it('tries the longest key first: %12 is the twelfth parameter, not the first followed by 2', () => {
    const twelve = Array.from({ length: 12 }, (_, i) => `p${i + 1}`);
    expect(formatMagentoMessage('%1 %12 %2', twelve)).toBe('p1 p12 p2');
    expect(formatMagentoMessage('%name and %name_long', { name: 'short', name_long: 'long' })).toBe('short and long');
  });

  it('does not scan the replacements again, and leaves placeholders with no parameter as they are', () => {
    expect(formatMagentoMessage('%1 then %2', ['%2', 'two'])).toBe('%2 then two');
    expect(formatMagentoMessage('%1 of %2 (%3)', ['a', 2])).toBe('a of 2 (%3)');
    expect(formatMagentoMessage('%fieldName is required', { other: 'x' })).toBe('%fieldName is required');
    expect(formatMagentoMessage('no parameters %1', undefined)).toBe('no parameters %1');
  });
});

describe('a Magento body of odd shape (a proxy\'s, or a hostile one)', () => {
  it('puts in values and lists of values only: a nested parameter is left as its placeholder, however deep', () => {
    let deep: unknown = ['bottom'];
    for (let i = 0; i < 20_000; i++) deep = [deep];
    expect(formatMagentoMessage('bad %1 and %2', [deep, ['a', 'b', ['c']]])).toBe('bad %1 and a, b');
    expect(formatMagentoMessage('%field is %value', { field: { nested: true }, value: null })).toBe('%field is null');
  });

  it('bounds the message and the parameters it works through, so a huge body cannot hold the event loop', () => {
    const parameters = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, 'v']));
    const formatted = formatMagentoMessage('%'.repeat(200_000), parameters);
    expect(formatted).toBe(`${'%'.repeat(2_000)}…`);
    // A parameter past the hundredth is not put in.
    expect(formatMagentoMessage('%k0 and %last', { ...parameters, last: 'L' })).toBe('v and %last');
  });

  it('bounds what it puts in too: a placeholder repeated cannot multiply a long parameter past what a string holds', () => {
    const formatted = formatMagentoMessage('%1'.repeat(1_000), ['x'.repeat(600_000)]);
    expect(formatted.length).toBeLessThanOrEqual(2_001);
    expect(formatted.endsWith('…')).toBe(true);
  });

  it('cuts a long message between characters, never inside a surrogate pair', () => {
    const formatted = formatMagentoMessage(`${'a'.repeat(1_999)}\u{1F600}tail`);
    expect(formatted).toBe(`${'a'.repeat(1_999)}…`);
  });

  it('passes over input errors that are not Magento\'s shape', () => {
    const error = commerceFailure('the read of order 1', answer(400, { message: 'Bad request', errors: [null, 'text', 7, { message: 'Field %1 is wrong', parameters: ['x'] }] }));
    expect(error.code).toBe('COMMERCE_ERROR');
    expect(error.message).toContain('Bad request (Field x is wrong)');
  });
});

describe('the page-size cap and the store hints', () => {
  it('learns the cap from Magento 2.4.7\'s named parameter and from the older positional one', () => {
    expect(pageSizeCapOf({ message: 'Maximum SearchCriteria pageSize is %max', parameters: { max: 300 } })).toBe(300);
    expect(pageSizeCapOf({ message: 'Maximum SearchCriteria pageSize is %1', parameters: [40] })).toBe(40);
    const error = commerceFailure('an order search', answer(400, { message: 'Maximum SearchCriteria pageSize is %max', parameters: { max: 300 } }));
    expect(error.maxPageSize).toBe(300);
    expect(error.message).toBe('The commerce platform refused an order search with HTTP 400: Maximum SearchCriteria pageSize is 300; ask for at most 300 orders a page (pageSize), or page with orders.iterate(), which keeps to the cap.');
  });

  it('keeps the platform\'s body for code, but not among the fields a logger walks (pino takes a field with a message for an error)', () => {
    const error = commerceFailure('an order search', answer(500, { message: 'Internal error %1', parameters: ['db'] }));
    expect(error.body).toEqual({ message: 'Internal error %1', parameters: ['db'] });
    const walked: string[] = [];
    for (const key in error) walked.push(key);
    expect(walked).not.toContain('body');
    expect(walked).toContain('upstreamStatus');
  });

  it('still names COMMERCE_SCOPE for the older "store wasn\'t found" 400', () => {
    const error = commerceFailure('the admin token request', answer(400, { message: "The store that was requested wasn't found. Verify the store and try again." }));
    expect(error.message).toBe("The commerce platform refused the admin token request with HTTP 400: The store that was requested wasn't found. Verify the store and try again; no store view has the code in the URL: check COMMERCE_SCOPE (commerce.scope), or leave it unset for `default`.");
  });
});

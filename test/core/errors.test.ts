import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PayError } from 'paywidget-server';
import { toPayError } from '../../src/core/errors.js';

describe('toPayError', () => {
  it('turns anything that is not a PayError into 500 INTERNAL_ERROR that says nothing of what was thrown', () => {
    for (const thrown of [new Error('connect ECONNREFUSED redis://:hunter2@10.0.0.5:6379'), 'hunter2', { message: 'hunter2' }, undefined]) {
      const error = toPayError(thrown);
      expect([error.code, error.status]).toEqual(['INTERNAL_ERROR', 500]);
      expect(error.message).toMatch(/see the server log/);
      const response = error.toResponse();
      expect([response.status, String(response.body)]).toEqual([500, expect.not.stringContaining('hunter2')]);
      expect(JSON.stringify(error)).not.toContain('hunter2');
      // The cause is kept for the server log.
      expect(error.cause).toBe(thrown);
    }
  });

  it('hands a PayError back as it is', () => {
    const error = new PayError('ORDER_NOT_PAYABLE', 'Order 42 is complete.');
    expect(toPayError(error)).toBe(error);
    expect(error.status).toBe(409);
    expect(inspect(error)).toContain('ORDER_NOT_PAYABLE');
  });
});

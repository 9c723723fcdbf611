import { expect } from 'vitest';
import { PayError } from 'paywidget-server';

/** The PayError a promise rejects with; fails the test when it resolves or rejects with something else. */
export async function rejection(promise: Promise<unknown>): Promise<PayError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(PayError);
  return error as PayError;
}

/** The PayError `run` throws; `refusal` says what should have thrown, for the failure when nothing does. */
export function thrown(run: () => unknown, refusal: string): PayError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(PayError);
    return error as PayError;
  }
  throw new Error(`expected ${refusal}`);
}

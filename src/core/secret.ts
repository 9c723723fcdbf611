const REDACTED = '[redacted]';
const inspectCustom = Symbol.for('nodejs.util.inspect.custom');

/**
 * Holds a credential so that logging, `JSON.stringify`, `String()` and `util.inspect` of any object
 * holding it print `[redacted]`. Only `reveal()` gives the value, at the moment it goes on the wire.
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [inspectCustom](): string {
    return `Secret(${REDACTED})`;
  }
}

export const redacted = REDACTED;

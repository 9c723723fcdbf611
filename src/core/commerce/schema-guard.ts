import type { z } from 'zod';

/** True when the value is valid; the value itself is then the parse result. */
export type Guard = (value: unknown) => boolean;

/**
 * A check compiled from a zod schema that accepts exactly what the schema accepts, reading the value
 * in place. zod's parse builds a copy of every object, which costs as much as JSON.parse on a page
 * of orders; for loose objects without transforms the copy equals the input, so the input is used.
 * Callers run zod itself on a value the guard refuses, for its error message.
 *
 * Only what the order schemas use compiles (loose objects, arrays, unions, optional, nullable,
 * numbers, strings, literals, unknown, never); anything else throws at module load.
 */
export function compileGuard(schema: z.ZodType): Guard {
  const def = internals(schema).def;
  // Only numbers and strings read their checks; elsewhere (a refine on a literal, union, optional…) they would be ignored.
  if (def.type !== 'number' && def.type !== 'string') noChecks(def);
  switch (def.type) {
    case 'object':
      return objectGuard(def);
    case 'array': {
      noChecks(def);
      const element = compileGuard(def.element!);
      return (value) => {
        if (!Array.isArray(value)) return false;
        for (let i = 0; i < value.length; i++) if (!element(value[i])) return false;
        return true;
      };
    }
    case 'optional': {
      const inner = compileGuard(def.innerType!);
      return (value) => value === undefined || inner(value);
    }
    case 'nullable': {
      const inner = compileGuard(def.innerType!);
      return (value) => value === null || inner(value);
    }
    case 'union': {
      const options = def.options!.map(compileGuard);
      return (value) => options.some((option) => option(value));
    }
    case 'literal': {
      const values = new Set(def.values);
      return (value) => values.has(value);
    }
    case 'number':
      return primitiveGuard(def, (value) => typeof value === 'number' && Number.isFinite(value));
    case 'string':
      return primitiveGuard(def, (value) => typeof value === 'string');
    case 'unknown':
      return () => true;
    case 'never':
      return () => false;
    default:
      throw new Error(`compileGuard: zod type "${def.type}" is not supported`);
  }
}

interface ZodInternals {
  def: {
    type: string;
    shape?: Record<string, z.ZodType>;
    catchall?: z.ZodType;
    element?: z.ZodType;
    innerType?: z.ZodType;
    options?: z.ZodType[];
    values?: unknown[];
    checks?: { _zod: { def: CheckDef } }[];
  };
  optin?: 'optional';
  optout?: 'optional';
}

interface CheckDef {
  check: string;
  format?: string;
  pattern?: RegExp;
  value?: number;
  inclusive?: boolean;
  minimum?: number;
}

function internals(schema: z.ZodType): ZodInternals {
  return (schema as unknown as { _zod: ZodInternals })._zod;
}

function noChecks(def: ZodInternals['def']): void {
  if (def.checks?.length) throw new Error(`compileGuard: checks on a zod ${def.type} are not supported`);
}

/** A loose object: its named fields are checked, any other field is kept as it is (zod's `unknown` catchall). */
function objectGuard(def: ZodInternals['def']): Guard {
  noChecks(def);
  if (internals(def.catchall ?? ({} as z.ZodType))?.def?.type !== 'unknown') {
    throw new Error('compileGuard: only loose objects (z.looseObject) are supported; a stripping or strict object changes the value');
  }
  const keys = Object.keys(def.shape!);
  const guards = keys.map((key) => compileGuard(def.shape![key]!));
  // An absent field passes when zod would skip it: optional in and out, and the schema takes undefined.
  const absentOk = keys.map((key, i) => {
    const field = internals(def.shape![key]!);
    return field.optin === 'optional' && field.optout === 'optional' && guards[i]!(undefined);
  });
  return (value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
    const record = value as Record<string, unknown>;
    for (let i = 0; i < keys.length; i++) {
      const field = record[keys[i]!];
      if (field === undefined ? !absentOk[i] : !guards[i]!(field)) return false;
    }
    return true;
  };
}

/** A number or string with zod's common checks: int, positive/nonnegative, regex, min length. */
function primitiveGuard(def: ZodInternals['def'], base: Guard): Guard {
  const tests = (def.checks ?? []).map(({ _zod: { def: check } }): Guard => {
    if (check.check === 'number_format' && check.format === 'safeint') return (value) => Number.isSafeInteger(value);
    if (check.check === 'greater_than') {
      const bound = check.value!;
      return check.inclusive ? (value) => (value as number) >= bound : (value) => (value as number) > bound;
    }
    if (check.check === 'string_format' && check.format === 'regex') {
      const pattern = check.pattern!;
      return (value) => {
        pattern.lastIndex = 0;
        return pattern.test(value as string);
      };
    }
    if (check.check === 'min_length') {
      const minimum = check.minimum!;
      return (value) => (value as string).length >= minimum;
    }
    throw new Error(`compileGuard: the zod check "${check.check}${check.format ? `/${check.format}` : ''}" is not supported`);
  });
  if (tests.length === 0) return base;
  if (tests.length === 1) {
    const [test] = tests as [Guard];
    return (value) => base(value) && test(value);
  }
  return (value) => base(value) && tests.every((test) => test(value));
}

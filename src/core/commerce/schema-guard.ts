import type { z } from 'zod';

/** True when the value is valid; the value itself is then the parse result. */
export type Guard = (value: unknown) => boolean;

export interface GuardOptions {
  /**
   * Objects become generated functions that read each field by name, as zod's own JIT does: about
   * three times faster on an order page than closures, whose field reads by variable key are slow.
   * Default: when the runtime allows `new Function` (edge runtimes do not).
   */
  generateCode: boolean;
}

let codeGeneration: boolean | undefined;

function canGenerateCode(): boolean {
  if (codeGeneration === undefined) {
    try {
      // Through an alias, as zod does: Next's edge build refuses a literal `new Function`, even one that is caught.
      const GeneratedFunction = Function;
      codeGeneration = new GeneratedFunction('return true')() === true;
    } catch {
      codeGeneration = false;
    }
  }
  return codeGeneration;
}

/**
 * A check compiled from a zod schema that accepts exactly what the schema accepts, reading the value
 * in place. zod's parse builds a copy of every object, which costs as much as JSON.parse on a page
 * of orders; for loose objects without transforms the copy equals the input, so the input is used.
 * Callers run zod itself on a value the guard refuses, for its error message.
 *
 * Only what the order schemas use compiles (loose objects, arrays, unions, optional, nullable,
 * numbers, strings, literals, unknown, never); anything else throws at module load.
 */
export function compileGuard(schema: z.ZodType, options: GuardOptions = { generateCode: canGenerateCode() }): Guard {
  const compile = (inner: z.ZodType) => compileGuard(inner, options);
  const def = internals(schema).def;
  // Only numbers and strings read their checks; elsewhere (a refine on a literal, union, optional…) they would be ignored.
  if (def.type !== 'number' && def.type !== 'string') noChecks(def);
  switch (def.type) {
    case 'object':
      return objectGuard(def, options);
    case 'array': {
      noChecks(def);
      const element = compile(def.element!);
      return (value) => {
        if (!Array.isArray(value)) return false;
        for (let i = 0; i < value.length; i++) if (!element(value[i])) return false;
        return true;
      };
    }
    case 'optional': {
      const inner = compile(def.innerType!);
      return (value) => value === undefined || inner(value);
    }
    case 'nullable': {
      const inner = compile(def.innerType!);
      return (value) => value === null || inner(value);
    }
    case 'union': {
      if (def.inclusive === false) unsupported('z.xor (exactly one alternative)');
      const alternatives = def.options!.map(compile);
      return (value) => alternatives.some((alternative) => alternative(value));
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
      unsupported(`the zod type "${def.type}"`);
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
    /** z.xor: false. */
    inclusive?: boolean;
  } & Partial<CheckDef>;
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

/** The checks of a schema: its `.check()`s, and itself when it is a format (z.int(), z.email()). */
function checksOf(def: ZodInternals['def']): CheckDef[] {
  const checks = (def.checks ?? []).map((check) => check._zod.def);
  return def.check === undefined ? checks : [def as CheckDef, ...checks];
}

function noChecks(def: ZodInternals['def']): void {
  if (checksOf(def).length) unsupported(`checks on a zod ${def.type}`);
}

function unsupported(what: string): never {
  throw new Error(`compileGuard: ${what} is not supported, so the guard could accept what zod refuses. Keep order schemas to loose objects (z.looseObject), arrays, unions, optional, nullable, literals and numbers or strings with int, positive, nonnegative, regex or min length, or teach src/core/commerce/schema-guard.ts the new case.`);
}

/** A loose object: its named fields are checked, any other field is kept as it is (zod's `unknown` catchall). */
function objectGuard(def: ZodInternals['def'], options: GuardOptions): Guard {
  noChecks(def);
  if (internals(def.catchall ?? ({} as z.ZodType))?.def?.type !== 'unknown') {
    unsupported('an object that strips or refuses unknown fields (its parse would change the value; use z.looseObject)');
  }
  const keys = Object.keys(def.shape!);
  const guards = keys.map((key) => compileGuard(def.shape![key]!, options));
  // An absent field passes when zod would skip it: optional in and out, and the schema takes undefined.
  const absentOk = keys.map((key, i) => {
    const field = internals(def.shape![key]!);
    return field.optin === 'optional' && field.optout === 'optional' && guards[i]!(undefined);
  });
  // Most of an order's fields are plain numbers and strings: checked inline, without a call.
  const inline = keys.map((key) => inlineLeaf(def.shape![key]!));
  if (options.generateCode) return generatedObjectGuard(keys, guards, absentOk, inline);
  return (value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
    const record = value as Record<string, unknown>;
    for (let i = 0; i < keys.length; i++) {
      const field = record[keys[i]!];
      if (field === undefined) {
        if (!absentOk[i]) return false;
      } else if (!leafAccepts(inline[i]!, field, guards[i]!)) {
        return false;
      }
    }
    return true;
  };
}

function leafAccepts(leaf: number, field: unknown, guard: Guard): boolean {
  if (leaf === NOT_INLINE) return guard(field);
  if (field === null) return (leaf & NULLABLE) !== 0;
  if (leaf & STRING) return typeof field === 'string';
  return (leaf & INT) ? Number.isSafeInteger(field) : typeof field === 'number' && Number.isFinite(field);
}

/** The same checks as one function reading every field by its literal name (keys are JSON-quoted). */
function generatedObjectGuard(keys: string[], guards: Guard[], absentOk: boolean[], inline: number[]): Guard {
  const lines = keys.map((key, i) => {
    const leaf = inline[i]!;
    let refused: string;
    if (leaf === NOT_INLINE) refused = `!g[${i}](v)`;
    else if (leaf & STRING) refused = 'typeof v !== "string"';
    else if (leaf & INT) refused = '!Number.isSafeInteger(v)';
    else refused = '(typeof v !== "number" || !Number.isFinite(v))';
    if (leaf !== NOT_INLINE && leaf & NULLABLE) refused = `(v !== null && ${refused})`;
    const absent = absentOk[i] ? '' : 'if (v === undefined) return false;\n';
    return `v = o[${JSON.stringify(key)}];\n${absent}if (v !== undefined && ${refused}) return false;`;
  });
  const body = `return function guard(o) {\nif (typeof o !== "object" || o === null || Array.isArray(o)) return false;\nlet v;\n${lines.join('\n')}\nreturn true;\n};`;
  const GeneratedFunction = Function;
  return new GeneratedFunction('g', body)(guards) as Guard;
}

const NOT_INLINE = 0;
const NUMBER = 1;
const INT = 2;
const STRING = 4;
const NULLABLE = 8;

/** NUMBER, NUMBER|INT or STRING (|NULLABLE) for a plain number, int or string, maybe optional or nullable. */
function inlineLeaf(schema: z.ZodType): number {
  let def = internals(schema).def;
  let flags = 0;
  while (def.type === 'optional' || def.type === 'nullable') {
    if (def.type === 'nullable') flags |= NULLABLE;
    def = internals(def.innerType!).def;
  }
  const checks = checksOf(def);
  if (def.type === 'string' && checks.length === 0) return flags | STRING;
  if (def.type !== 'number') return NOT_INLINE;
  if (checks.length === 0) return flags | NUMBER;
  if (checks.length === 1 && checks[0]!.check === 'number_format' && checks[0]!.format === 'safeint') return flags | NUMBER | INT;
  return NOT_INLINE;
}

/** A number or string with zod's common checks: int, positive/nonnegative, regex, min length. */
function primitiveGuard(def: ZodInternals['def'], base: Guard): Guard {
  const tests = checksOf(def).map((check): Guard => {
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
    return unsupported(`the zod check "${check.check}${check.format ? `/${check.format}` : ''}"`);
  });
  if (tests.length === 0) return base;
  if (tests.length === 1) {
    const [test] = tests as [Guard];
    return (value) => base(value) && test(value);
  }
  return (value) => base(value) && tests.every((test) => test(value));
}

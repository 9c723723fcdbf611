/** The globals that tell whether Node's built-in modules are reachable. */
export interface NodeGlobals {
  process?: { getBuiltinModule?: (id: string) => unknown } | undefined;
}

/**
 * A loader of Node's built-in modules through `process.getBuiltinModule` (Node 20.16+, 22.3+), which no
 * bundler tries to resolve; undefined where the runtime has none. Next's edge runtime defines it and throws
 * from it, so reading it and calling it are both guarded: a module that cannot be had is undefined.
 */
export function builtinModuleLoader(globals: NodeGlobals = globalThis as NodeGlobals): ((id: string) => unknown) | undefined {
  let getBuiltin: unknown;
  try {
    getBuiltin = globals.process?.getBuiltinModule;
  } catch {
    return undefined;
  }
  if (typeof getBuiltin !== 'function') return undefined;
  return (id) => {
    try {
      return (getBuiltin as (id: string) => unknown).call(globals.process, id);
    } catch {
      return undefined;
    }
  };
}

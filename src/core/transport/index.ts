import { builtinModuleLoader, type NodeGlobals } from '../builtin-module.js';
import type { BodyBuffers } from './body-buffers.js';
import { fetchTransport } from './fetch.js';
import { nodeTransport, type NodeHttpModules } from './node.js';

/** The headers of an upstream answer: all the library reads of them. */
export interface UpstreamHeaders {
  get(name: string): string | null;
}

export interface UpstreamResponse {
  status: number;
  ok: boolean;
  headers: UpstreamHeaders;
  body: Uint8Array;
}

/** What one attempt sends. */
export interface OutgoingRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string;
  /** Where node:http reads the answer into, when the caller gives each body back once read (see BodyBuffers). */
  bodies?: BodyBuffers | undefined;
}

/**
 * Sends one request and reads the whole answer, both under `signal`; rejects with `signal.reason`
 * when it aborts (a TimeoutError for a time-out), as fetch does. Redirects come back as they are.
 */
export type Transport = (request: OutgoingRequest, signal: AbortSignal) => Promise<UpstreamResponse>;

/**
 * node:http when the runtime has it, fetch otherwise (edge runtimes, Node before 20.16). On Node,
 * fetch costs about twice the CPU of node:http for a 500 KB order page (measured in bench/order-sync).
 */
export function selectTransport(globals?: NodeGlobals): Transport {
  const getBuiltin = builtinModuleLoader(globals);
  if (!getBuiltin) return fetchTransport;
  const modules = { http: getBuiltin('node:http'), https: getBuiltin('node:https'), zlib: getBuiltin('node:zlib'), stream: getBuiltin('node:stream') } as Partial<NodeHttpModules>;
  return modules.http && modules.https && modules.zlib && modules.stream ? nodeTransport(modules as NodeHttpModules) : fetchTransport;
}

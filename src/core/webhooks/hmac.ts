import { builtinModuleLoader, type NodeGlobals } from '../builtin-module.js';
import { nodeHmac, type NodeCryptoModules } from './hmac-node.js';
import { webCryptoHmac } from './hmac-webcrypto.js';

/** The body as verified: bytes exactly as received, or a string (signed as its UTF-8 bytes). */
export type SignedBody = Uint8Array | string;

/** HMAC-SHA256 of `<timestamp>.<body>` against the signing secrets, in one runtime's crypto. */
export interface Hmac {
  readonly runtime: 'node' | 'webcrypto';
  /**
   * Index of the first secret whose signature equals `signatureHex` (64 lowercase hex characters,
   * already checked), or -1. Compared in constant time. Synchronous on Node, a Promise on WebCrypto.
   */
  match(timestamp: string, body: SignedBody, signatureHex: string): number | Promise<number>;
  /** The body as UTF-8 text, invalid sequences replaced by U+FFFD. */
  text(body: Uint8Array): string;
}

/** Builds an Hmac for a set of secrets (given in plain text once, kept inside a closure). */
export type HmacFactory = (secrets: readonly string[]) => Hmac;

interface RuntimeGlobals extends NodeGlobals {
  crypto?: { subtle?: SubtleCrypto } | undefined;
}

/**
 * node:crypto when the runtime has it (fast and synchronous), WebCrypto otherwise (edge runtimes).
 * Node reaches node:crypto through `process.getBuiltinModule` (Node 20.16+, 22.3+), which no bundler
 * tries to resolve; older Node 20 releases load it with one dynamic import, hence the Promise.
 */
export function selectHmac(globals: RuntimeGlobals = globalThis as RuntimeGlobals): HmacFactory | Promise<HmacFactory> {
  const getBuiltin = builtinModuleLoader(globals);
  if (getBuiltin) {
    const modules = nodeModules(getBuiltin('node:crypto'), getBuiltin('node:buffer'));
    if (modules) return (secrets) => nodeHmac(modules, secrets);
  } else if (globals.process !== undefined && globals === globalThis) {
    return importNodeModules().then((modules) => (modules ? (secrets) => nodeHmac(modules, secrets) : webCryptoFactory(globals)));
  }
  return webCryptoFactory(globals);
}

function webCryptoFactory(globals: RuntimeGlobals): HmacFactory {
  const subtle = globals.crypto?.subtle;
  if (!subtle) {
    return () => {
      throw new Error('paywidget-server: this runtime has neither node:crypto nor WebCrypto (crypto.subtle); webhooks cannot be verified here.');
    };
  }
  return (secrets) => webCryptoHmac(subtle, secrets);
}

function nodeModules(crypto: unknown, buffer: unknown): NodeCryptoModules | undefined {
  const c = crypto as Partial<NodeCryptoModules['crypto']> | undefined;
  const b = buffer as { Buffer?: NodeCryptoModules['Buffer'] } | undefined;
  if (typeof c?.createHmac !== 'function' || typeof c.timingSafeEqual !== 'function' || typeof c.createSecretKey !== 'function' || !b?.Buffer) return undefined;
  return { crypto: c as NodeCryptoModules['crypto'], Buffer: b.Buffer };
}

async function importNodeModules(): Promise<NodeCryptoModules | undefined> {
  // A variable specifier keeps bundlers from resolving node:crypto for edge builds.
  const specifiers = ['node:crypto', 'node:buffer'];
  try {
    const [crypto, buffer] = await Promise.all(specifiers.map((s) => import(/* webpackIgnore: true */ s)));
    return nodeModules(crypto, buffer);
  } catch {
    return undefined;
  }
}

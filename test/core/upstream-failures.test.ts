import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/core/config.js';
import type { PayError } from '../../src/core/errors.js';
import { callUpstream } from '../../src/core/http.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/tls/${name}`, import.meta.url));
let tls: Server;
let plain: Server;
const port = (server: Server) => (server.address() as AddressInfo).port;

beforeAll(async () => {
  // A service that is up: one speaks TLS with a certificate Node does not trust, the other plain HTTP.
  tls = createHttpsServer({ key: fixture('key.pem'), cert: fixture('cert.pem') }, (_req, res) => res.end('{}'));
  plain = createHttpServer((_req, res) => res.end('{}'));
  await Promise.all([tls, plain].map((server) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))));
});
afterAll(() => Promise.all([tls, plain].map((server) => new Promise((resolve) => server.close(resolve)))));

const failure = async (url: string, transport: 'auto' | 'fetch') => {
  const http = resolveConfig({ env: {}, http: { maxRetries: 0, transport } }).http;
  return callUpstream({ service: 'payment', method: 'GET', url: `${url}/api/v1/payments/p/status` }, http).then(() => undefined, (error: unknown) => error as PayError);
};

describe.each(['auto', 'fetch'] as const)('a connection TLS ended (transport %s): what to change, not "check that the service is up"', (transport) => {
  it('a certificate Node does not trust: NODE_EXTRA_CA_CERTS', async () => {
    const error = await failure(`https://127.0.0.1:${port(tls)}`, transport);
    expect(error?.code).toBe('UPSTREAM_UNREACHABLE');
    expect(error!.message).toMatch(/\(DEPTH_ZERO_SELF_SIGNED_CERT\): Node does not trust its TLS certificate\. .*NODE_EXTRA_CA_CERTS=/);
    expect(error!.message).not.toContain('is up');
  });

  it('https:// to a port that speaks plain HTTP: use http://', async () => {
    const error = await failure(`https://127.0.0.1:${port(plain)}`, transport);
    expect(error?.code).toBe('UPSTREAM_UNREACHABLE');
    expect(error!.message).toMatch(/that port does not speak TLS\. Use http:\/\/ in PAY_API_URL \(payment\.apiUrl\), or the port of the service's https:\/\/ address\.$/);
  });

  it('http:// to a TLS port, which closes the connection: says https:// may be the fix', async () => {
    const error = await failure(`http://127.0.0.1:${port(tls)}`, transport);
    expect(error?.code).toBe('UPSTREAM_UNREACHABLE');
    expect(error!.message).toMatch(/If that port speaks TLS \(it closes a plain http:\/\/ connection like this\), use https:\/\/\.$/);
  });
});

import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox();
});
afterAll(() => sb.close());

/** Sends one request line as written (fetch would normalise the target) and answers the status line. */
function rawRequest(baseUrl: string, target: string): Promise<string> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(`GET ${target} HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n\r\n`));
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString('latin1')));
    socket.on('end', () => resolve(text.split('\r\n')[0]!));
    socket.on('error', reject);
  });
}

describe('sandbox servers: request-targets that are no path', () => {
  it.each(['payment', 'commerce', 'widget'] as const)('the %s server answers them and keeps serving', async (which) => {
    const base = { payment: sb.paymentUrl, commerce: sb.commerceUrl, widget: sb.widgetUrl }[which];
    expect(await rawRequest(base, 'http://a:b:c/')).toMatch(/^HTTP\/1\.1 400 /);
    // `//x/...` is a path on this server, not another host.
    expect(await rawRequest(base, '//evil/api/v1/checkout/init')).toMatch(/^HTTP\/1\.1 404 /);
    // The process is still up and the server still answers.
    expect(await rawRequest(base, '/nothing-here')).toMatch(/^HTTP\/1\.1 404 /);
  });
});

import { createServer } from 'node:net';

/** A 127.0.0.1 port nobody listens on right now: for servers tests start, or to get a refused connection. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

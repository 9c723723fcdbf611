import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LocalServer {
  server: Server;
  /** `http://127.0.0.1:<port>` */
  base: string;
  /** Drops open connections (hanging or stalled requests) first, so the server, and vitest, can close. */
  close(): Promise<void>;
}

/** A node:http server for `listener` on an ephemeral 127.0.0.1 port. */
export async function startLocalServer(listener: RequestListener): Promise<LocalServer> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

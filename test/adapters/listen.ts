import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetchSender, type MountedApp } from './behaviour.js';

/** Serves a Node request listener on an ephemeral 127.0.0.1 port with the library under `mount`. */
export async function listen(server: Server, mount: string): Promise<MountedApp> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}${mount}`;
  return {
    send: await fetchSender(base),
    webhookUrl: `${base}/webhooks`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

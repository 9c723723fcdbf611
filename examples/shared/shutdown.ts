import type { Server } from 'node:http';
import type { Pay } from 'paywidget-server';

/**
 * Stopped by a process manager (SIGTERM): stop the sweeps, finish the requests in flight, let the library land
 * the webhook claim writes it retries after a store blip (else a duplicate could run an event again), then close
 * what is yours (a Redis client) and exit.
 */
export function stopOnSigterm(server: Server, pay: Pay, stopSweeps: () => void, closeYours: () => Promise<unknown> = async () => {}): void {
  process.once('SIGTERM', () => {
    stopSweeps();
    server.close(async () => {
      await pay.drain({ timeoutMs: 10_000 }); // within a process manager's grace period (Kubernetes: 30 s)
      await closeYours().catch(() => {});
      process.exit(0);
    });
  });
}

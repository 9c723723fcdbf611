import type { ChildProcess } from 'node:child_process';
import { freePort } from './free-port.js';

export interface StartedProcess {
  child: ChildProcess;
  port: number;
  /** What it printed so far, stdout and stderr interleaved. */
  output(): string;
}

/**
 * Spawns a server (`spawnOn` must pipe stdout and stderr) on a port nobody listens on, and resolves once it
 * prints `ready`. Rejects with what it printed when it exits or stays silent for `ms` (keep it under the
 * test's time-out, else the test times out without the output, leaving the child running). Another test's server can
 * take the port between the probe and the child's listen: a child that says its port is in use is started
 * again on a new one.
 */
export async function startOnFreePort(spawnOn: (port: number) => ChildProcess, ready: string, ms = 15_000): Promise<StartedProcess> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child = spawnOn(port);
    let output = '';
    const outcome = await new Promise<string | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(`printed no "${ready}" within ${ms} ms`), ms);
      const settle = (failure: string | undefined) => {
        clearTimeout(timer);
        resolve(failure);
      };
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes(ready)) settle(undefined);
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      // 'close', not 'exit': by then everything it printed has been read.
      child.once('close', (code, signal) => settle(`exited (${signal ?? code}) before it printed "${ready}"`));
    });
    if (outcome === undefined) return { child, port, output: () => output };
    child.kill('SIGKILL');
    if (attempt < 5 && /in use/i.test(output)) continue;
    throw new Error(`${outcome}. It printed:\n${output}`);
  }
}

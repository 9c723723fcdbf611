#!/usr/bin/env node
/** The `paywidget` command. */
import { main } from './main.js';

// Write failures (EPIPE when the reader of `| head` leaves, or of stderr) reach the commands through their write callbacks.
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});

const controller = new AbortController();
let interrupted = 0;
// SIGHUP too: a closed terminal or ssh session stops a sync as Ctrl-C does (its position saved, its files tidied).
for (const name of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(name, () => {
    // First signal: stop cleanly (a sync saves its position). Second: leave at once.
    if (++interrupted > 1) process.exit(130);
    controller.abort();
  });
}

main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env, signal: controller.signal }).then(
  (code) => {
    process.exitCode = code;
    // Stopped by a signal, its output written and its stores closed: it leaves now, not once a request still running in the
    // background answers (an admin login goes on after its callers left, so that a server records its refusal).
    if (controller.signal.aborted) process.exit(code);
  },
  (error: unknown) => {
    process.stderr.write(`paywidget: ${String(error)}\n`);
    process.exitCode = 1;
  },
);

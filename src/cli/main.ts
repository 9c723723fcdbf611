import { PayError, UpstreamError } from '../core/errors.js';
import { ordersCommand } from './commands/orders.js';
import { paymentsCommand } from './commands/payments.js';
import { reconcileCommand } from './commands/reconcile.js';
import { sandboxCommand } from './commands/sandbox.js';
import { forTheShell } from './for-the-shell.js';
import { escapeControls, EXIT, ExitError, UsageError, write, type CliIo, type Command } from './io.js';
import { upstreamAnswer } from './upstream-answer.js';

/**
 * The command tree. Later commands register here: `payments` (with `reconcile <id>`) and a top-level
 * `reconcile` and `sandbox` are each one more entry.
 */
export const COMMANDS: Command[] = [ordersCommand, paymentsCommand, reconcileCommand, sandboxCommand];

const ROOT: Command = {
  name: 'paywidget',
  summary: '',
  help: `Usage: paywidget <command> [options]

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(12)}${c.summary}`).join('\n')}

Run 'paywidget <command> --help' for more; 'paywidget --version' prints the version.
Exit codes: 0 done, 1 failed, 2 bad usage, 3 and 4 what 'reconcile' or
'payments reconcile' found (see their --help),
75 checkpoint in use by another run, 130 interrupted.`,
  subcommands: COMMANDS,
};

/** The package version, put in by the build (tsup define); 'dev' when run from the sources. */
declare const __PAYWIDGET_VERSION__: string | undefined;
const VERSION = typeof __PAYWIDGET_VERSION__ === 'string' ? __PAYWIDGET_VERSION__ : 'dev';

const isHelp = (arg: string | undefined) => arg === '--help' || arg === '-h' || arg === 'help';

/** Runs one command line; never throws: errors are printed on stderr and become the exit code. */
export async function main(argv: string[], io: CliIo): Promise<number> {
  let command = ROOT;
  let path = ROOT.name;
  let rest = argv;
  try {
    while (command.subcommands) {
      const [next, ...others] = rest;
      if (command === ROOT && (next === '--version' || next === '-v')) {
        await write(io.stdout, `${VERSION}\n`);
        return EXIT.ok;
      }
      // 'paywidget help orders sync', as git has it: the help of the command named.
      if (next === 'help' && others.length > 0) {
        rest = [...others, '--help'];
        continue;
      }
      if (next === undefined || isHelp(next)) {
        await write(next === undefined ? io.stderr : io.stdout, `${command.help}\n`);
        return next === undefined ? EXIT.usage : EXIT.ok;
      }
      const found = command.subcommands.find((c) => c.name === next);
      if (!found) throw new UsageError(`unknown command '${next}'.`, path);
      command = found;
      path = `${path} ${found.name}`;
      rest = others;
    }
    return await command.run!(rest, io, path);
  } catch (error) {
    // Escaped, whatever the error: a message may quote what a service answered (Magento's words), which must not drive the terminal.
    const say = (text: string) => write(io.stderr, escapeControls(text));
    if (error instanceof UsageError) {
      await say(`${error.command}: ${error.message}\nRun '${error.command} --help' for usage.\n`);
      return EXIT.usage;
    }
    if ((error as NodeJS.ErrnoException).code === 'EPIPE') return EXIT.ok; // the reader went away (| head)
    if (error instanceof ExitError) {
      await say(`${path}: ${error.message}\n`);
      // A position that could not be saved on the way out of a Ctrl-C: said, but the run was still interrupted.
      return io.signal?.aborted ? EXIT.interrupted : error.exitCode;
    }
    // A command stopped by Ctrl-C fails with whatever its aborted call threw; what happened is the interruption.
    // Any other failure (a position that could not be saved on the way out) is still worth saying.
    const interrupted = io.signal?.aborted === true;
    const message = interrupted && isAbort(error, io.signal!) ? 'interrupted.'
      : error instanceof PayError ? `${forTheShell(error.message)} [${error.code}]${answerLine(error)}`
      : `unexpected error: ${error instanceof Error ? error.message : String(error)}`;
    await say(`${path}: ${message}\n`);
    return interrupted ? EXIT.interrupted : EXIT.failed;
  }
}

/** What the upstream said with its refusal, on a line of its own. */
function answerLine(error: PayError): string {
  const answer = error instanceof UpstreamError ? upstreamAnswer(error) : undefined;
  return answer === undefined ? '' : `\n  ${answer}`;
}

/** The error an aborted call rejects with: the signal's reason or an AbortError, or the core's error caused by one. */
function isAbort(error: unknown, signal: AbortSignal): boolean {
  if (error === signal.reason || (error instanceof Error && error.name === 'AbortError')) return true;
  return error instanceof PayError && error.cause !== undefined && isAbort(error.cause, signal);
}

import type { Writable } from 'node:stream';
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** Where a command reads and writes; the real process by default, plain objects in tests. */
export interface CliIo {
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean; columns?: number };
  env: Record<string, string | undefined>;
  /** Aborted on SIGINT / SIGTERM: long commands stop cleanly and save their position. */
  signal?: AbortSignal | undefined;
}

/**
 * Exit codes: 0 done, 1 failed, 2 bad usage, 75 busy (the checkpoint is in use by another run; sysexits'
 * EX_TEMPFAIL, so a scheduler can tell "try later" from a failure), 130 interrupted (as shells report SIGINT).
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, busy: 75, interrupted: 130 } as const;

/** A failure with an exit code of its own; printed like any other. */
export class ExitError extends Error {
  constructor(message: string, readonly exitCode: number) {
    super(message);
    this.name = 'ExitError';
  }
}

/** A mistake in the command line: printed with a pointer to --help, exit code 2. */
export class UsageError extends Error {
  constructor(message: string, readonly command: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** A command, or a group of them (`paywidget orders …`). Issue-level additions register here. */
export interface Command {
  name: string;
  /** One line for the listing of the parent's help. */
  summary: string;
  /** The full --help text. */
  help: string;
  run?(args: string[], io: CliIo, path: string): Promise<number>;
  subcommands?: Command[];
}

/** A command made of subcommands; its --help lists them, each as `usage` (e.g. 'get <entity_id>') and its summary. */
export function commandGroup(name: string, summary: string, subcommands: { usage: string; command: Command }[]): Command {
  const width = Math.max(...subcommands.map(({ usage }) => usage.length)) + 3;
  const listing = subcommands.map(({ usage, command }) => `  ${usage.padEnd(width)}${command.summary}`).join('\n');
  return {
    name,
    summary,
    help: `Usage: paywidget ${name} <command>\n\nCommands:\n${listing}\n\nRun 'paywidget ${name} <command> --help' for its options.`,
    subcommands: subcommands.map(({ command }) => command),
  };
}

type Options = NonNullable<ParseArgsConfig['options']>;
type HelpOption = { help: { type: 'boolean'; short: string } };
/** What `parse` returns (spelled out so declaration files can name it). */
export type Parsed<T extends Options> = ReturnType<typeof parseArgs<{ args: string[]; options: T & HelpOption; allowPositionals: boolean; strict: true }>>;

/**
 * util.parseArgs with --help/-h added and its errors as UsageError. An option that takes one value and is
 * given twice is refused: parseArgs keeps the last, so `--from 2024-01-01 --from 2030-01-01` would run
 * on 2030 without a word.
 */
export function parse<T extends Options>(command: string, args: string[], options: T, positionals = false): Parsed<T> {
  let parsed;
  try {
    parsed = parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: positionals, strict: true, tokens: true });
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/\. To specify a positional.*$/s, '.'), command);
  }
  const seen = new Set<string>();
  for (const token of parsed.tokens) {
    const option = token.kind === 'option' ? options[token.name] : undefined;
    if (token.kind !== 'option' || option?.type !== 'string' || option.multiple) continue;
    if (seen.has(token.name)) throw new UsageError(`--${token.name} was given twice (${JSON.stringify(token.rawName)} again); give it once, with the value you mean.`, command);
    seen.add(token.name);
  }
  const { tokens: _tokens, ...result } = parsed;
  return result as unknown as Parsed<T>;
}

/**
 * A whole-number option as people write it: digits only, from `min` to `max` (Number() alone would take
 * 0x10, 1e2 and ' 5'). Undefined when absent; `must` says what it must be, for the usage error.
 */
export function wholeNumber(command: string, name: string, raw: string | undefined, must: string, min = 0, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!/^[0-9]+$/.test(raw) || value < min || value > max) throw new UsageError(`--${name} must be ${must} (got '${raw}').`, command);
  return value;
}

export function write(stream: Writable, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    stream.write(text, (error) => (error ? reject(error) : resolve()));
  });
}

/**
 * Text from outside (a service's answer, its words quoted in an error) as a terminal may be shown it: C0 and C1
 * controls (ESC begins a terminal's escape sequences) and bidirectional marks and overrides (which reorder what is
 * shown) written as JSON escapes; line breaks and tabs stay.
 */
export function escapeControls(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A warning on stderr that does not stop the command (a closed stderr loses it, and nothing else). */
export function warnOn(io: CliIo): (message: string) => void {
  return (message) => void io.stderr.write(`paywidget: warning: ${message}\n`, () => {});
}

/**
 * Writes a command's answer, whose exit code says what it found: a reader that went away after the first
 * lines (`| head`) must not turn "disagreements found" (3) into success, so a broken pipe is not an error here.
 */
export function writeVerdict(stream: Writable, text: string): Promise<void> {
  return write(stream, text).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
}

/** `--help` on any command: its help text on stdout, exit 0. */
export async function printHelp(io: CliIo, command: Pick<Command, 'help'>): Promise<number> {
  await write(io.stdout, `${command.help}\n`);
  return EXIT.ok;
}

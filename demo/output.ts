/** How the demo talks: short sentences per step, a ✓ or ✗ mark, a summary table. Color only on a terminal. */
import type { Writable } from 'node:stream';

export interface Output {
  /** A line as it is. */
  line(text?: string): void;
  /** A step's heading: `3. Pay with the test card that succeeds`. */
  heading(number: number, title: string): void;
  /** A sentence inside the current step. */
  say(text: string): void;
  /** The step did what it should. */
  pass(text: string): void;
  /** The step failed. */
  fail(text: string): void;
  /** Rows under a header, columns aligned. */
  table(header: readonly string[], rows: ReadonlyArray<ReadonlyArray<string>>): void;
  readonly bold: (text: string) => string;
  readonly dim: (text: string) => string;
}

const INDENT = '   ';

/** Color when the stream is a terminal and NO_COLOR is unset (https://no-color.org). */
export function createOutput(stream: Writable & { isTTY?: boolean }, env: Record<string, string | undefined> = process.env): Output {
  const color = stream.isTTY === true && !env.NO_COLOR;
  const paint = (code: string) => (text: string) => (color ? `\x1b[${code}m${text}\x1b[0m` : text);
  const green = paint('32');
  const red = paint('31');
  const bold = paint('1');
  const dim = paint('2');
  const line = (text = '') => void stream.write(`${text}\n`);

  return {
    line,
    heading: (number, title) => line(`\n${bold(`${number}. ${title}`)}`),
    say: (text) => line(`${INDENT}${text}`),
    pass: (text) => line(`${INDENT}${green('✓')} ${text}`),
    fail: (text) => line(`${INDENT}${red('✗')} ${red(text)}`),
    table(header, rows) {
      const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
      const format = (cells: ReadonlyArray<string>) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd();
      line(bold(format(header)));
      line(dim(format(widths.map((w) => '-'.repeat(w)))));
      for (const row of rows) {
        const text = format(row);
        line(row[1]?.startsWith('✗') ? red(text) : text);
      }
    },
    bold,
    dim,
  };
}

/** `wt_1a2b3c…`: enough to tell tokens apart, never enough to use one. */
export function truncateToken(token: string): string {
  return `${token.slice(0, 9)}…`;
}

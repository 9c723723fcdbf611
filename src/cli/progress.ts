import type { Writable } from 'node:stream';

const number = (n: number) => Math.round(n).toLocaleString('en-US');

function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.max(0, Math.round(seconds));
  return s >= 3600 ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m` : s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

/** A one-line progress bar redrawn in place (only meant for a terminal), at most 10 times a second. */
export class ProgressBar {
  private last = 0;
  private drawn = false;

  constructor(private readonly stream: Writable & { columns?: number }, private readonly label: string) {}

  update(done: number, total: number, ratePerSecond: number, force = false): void {
    const now = Date.now();
    if (!force && now - this.last < 100) return;
    this.last = now;
    const fraction = total > 0 ? Math.min(1, done / total) : 0;
    const width = Math.max(10, Math.min(30, (this.stream.columns ?? 80) - 60));
    const filled = Math.round(fraction * width);
    const eta = ratePerSecond > 0 ? (total - done) / ratePerSecond : Infinity;
    const line = `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.floor(fraction * 100)).padStart(3)}%  ${number(done)}/${number(total)} ${this.label}  ${number(ratePerSecond)}/s  ETA ${duration(eta)}`;
    this.stream.write(`\r${line}\x1b[K`);
    this.drawn = true;
  }

  /** Ends the line so later output starts on a fresh one. */
  finish(): void {
    if (this.drawn) this.stream.write('\n');
    this.drawn = false;
  }
}

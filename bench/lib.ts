/** Small helpers shared by the benchmarks: time a function per call, print figures next to their reference. */

export interface Figure {
  name: string;
  /** What the figure means, e.g. 'µs per call' or 'req/s'. */
  unit: string;
  value: number;
  /** Name of the reference figure in the same table, for the ratio. Omit on the reference itself. */
  reference?: string;
  /** Optional target ratio against the reference, printed beside the ratio. */
  target?: string;
  /** The lowest and highest ratio of single rounds, when the figure is a median of several. */
  rounds?: RatioRange;
}

/** The lowest and highest of several ratios. */
export type RatioRange = [low: number, high: number];

/** Median microseconds per call over several rounds, after a warm-up. */
export function timePerCall(fn: () => unknown, { iterations = 20_000, rounds = 7 } = {}): number {
  for (let i = 0; i < iterations / 4; i++) fn();
  const samples: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) fn();
    samples.push(Number(process.hrtime.bigint() - start) / 1000 / iterations);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)] as number;
}

export function printTable(title: string, figures: Figure[]): void {
  const byName = new Map(figures.map((f) => [f.name, f]));
  console.log(`\n${title}`);
  const rows = figures.map((f) => {
    const ref = f.reference ? byName.get(f.reference) : undefined;
    const ratio = ref ? f.value / ref.value : undefined;
    return [
      f.name,
      `${format(f.value)} ${f.unit}`,
      ref ? `${ratio!.toFixed(2)}× ${f.reference}${f.rounds ? ` (rounds ${f.rounds[0].toFixed(2)}–${f.rounds[1].toFixed(2)}×)` : ''}` : 'reference',
      f.target ?? '',
    ];
  });
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => r[i]!.length), ['what', 'measured', 'ratio', 'target'][i]!.length));
  const line = (cells: string[]) => '  ' + cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  console.log(line(['what', 'measured', 'ratio', 'target']));
  for (const row of rows) console.log(line(row));
}

function format(value: number): string {
  return value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
}

/** The signing secret every webhook benchmark signs and verifies with. */
export const BENCH_SECRET = 'whsec_bench_0123456789abcdef0123456789';

/** Runs the steps in order, stops at the first that fails, and prints the summary table. */
import { PayError } from 'paywidget-server';
import type { Output } from './output.js';
import type { DemoContext, Step } from './steps.js';

export interface StepResult {
  step: Step;
  state: 'passed' | 'failed' | 'skipped';
  detail: string;
  ms: number;
}

export interface WalkthroughResult {
  ok: boolean;
  results: StepResult[];
  /** `step 4 (webhook) failed: expected …, got …` when a step failed. */
  failure?: string;
}

function reason(error: unknown): string {
  if (error instanceof PayError) return `${error.message} [${error.code}]`;
  return error instanceof Error ? error.message : String(error);
}

export async function runSteps(steps: readonly Step[], ctx: DemoContext, out: Output): Promise<WalkthroughResult> {
  const results: StepResult[] = [];
  let failure: string | undefined;
  for (const [index, step] of steps.entries()) {
    if (failure !== undefined) {
      results.push({ step, state: 'skipped', detail: 'not run', ms: 0 });
      continue;
    }
    out.heading(index + 1, step.title);
    const started = performance.now();
    try {
      const detail = await step.run(ctx);
      const ms = performance.now() - started;
      out.pass(detail);
      results.push({ step, state: 'passed', detail, ms });
    } catch (error) {
      failure = `step ${index + 1} (${step.name}) failed: ${reason(error)}`;
      out.fail(failure);
      results.push({ step, state: 'failed', detail: reason(error), ms: performance.now() - started });
    }
  }
  return { ok: failure === undefined, results, ...(failure === undefined ? {} : { failure }) };
}

/** A check that did not hold. */
export class CheckFailed extends Error {
  override name = 'CheckFailed';
}

export function check(condition: unknown, expected: string, got: string): asserts condition {
  if (!condition) throw new CheckFailed(`expected ${expected}, got ${got}`);
}


const MARK = { passed: '✓ passed', failed: '✗ failed', skipped: '- skipped' } as const;

export function printSummary(out: Output, result: WalkthroughResult, totalMs: number): void {
  out.line();
  out.line(out.bold('Summary'));
  out.table(['step', 'result', 'time', 'detail'], result.results.map((r, i) => [
    `${i + 1}. ${r.step.name}`,
    MARK[r.state],
    r.state === 'skipped' ? '' : `${Math.round(r.ms)} ms`,
    r.detail,
  ]));
  out.line();
  const passed = result.results.filter((r) => r.state === 'passed').length;
  if (result.ok) out.line(`All ${passed} steps did what they should, in ${(totalMs / 1000).toFixed(1)} s.`);
  else out.line(`${passed} of ${result.results.length} steps passed; ${result.failure}.`);
}

/** What a chaos scenario is and what it reports: one row of the `npm run chaos` table. */

/** How big a run is: `full` for `npm run chaos`, `reduced` for the seeded versions in `npm test`. */
export type Scale = 'full' | 'reduced';

/** What every scenario gets. */
export interface ScenarioContext {
  /** Seed of every random choice (kill moments, faults, edits); printed with the row. */
  readonly seed: number;
  readonly scale: Scale;
  /** Path of the controller bundle (what the image runs), built once per run. */
  readonly bundle: string;
  /** Progress lines (stderr in the CLI, silent in tests). */
  readonly log: (line: string) => void;
}

/** One row of the table. */
export interface ScenarioResult {
  /** `R1`…`R5`, `Soak`. */
  readonly id: string;
  /** What was done, in a few words with the sizes. */
  readonly done: string;
  /** The invariants checked, named. */
  readonly invariants: readonly string[];
  /** Writes, e.g. `2,104 / 2,000 minimal (1.05×)`. */
  readonly writes: string;
  /** Further figures of the scenario (name → value). */
  readonly figures: Readonly<Record<string, string>>;
  readonly seconds: number;
  readonly seed: number;
  /** Violated invariants; empty = pass. */
  readonly failures: readonly string[];
}

/** A scenario: runs against its own cluster and reports its row; it never throws for a violated invariant. */
export interface Scenario {
  readonly id: string;
  readonly title: string;
  run(context: ScenarioContext): Promise<ScenarioResult>;
}

/** Collects violations with their context, so a row names every one that failed. */
export class Verdict {
  readonly failures: string[] = [];

  /** Records `message` unless `ok`. */
  expect(ok: boolean, message: string): void {
    if (!ok) this.failures.push(message);
  }

  /** Records each problem of a list, at most `limit` of them plus a count of the rest. */
  expectNone(problems: readonly string[], what: string, limit = 5): void {
    if (problems.length === 0) return;
    this.failures.push(`${what}: ${problems.slice(0, limit).join('; ')}${problems.length > limit ? `; …and ${problems.length - limit} more` : ''}`);
  }
}

/** `n` with thousands separators. */
export function fmt(n: number): string {
  return n.toLocaleString('en-US');
}

/** `a / b minimal (r×)`. */
export function writesFigure(total: number, minimal: number): string {
  return `${fmt(total)} / ${fmt(minimal)} minimal (${(total / Math.max(minimal, 1)).toFixed(2)}×)`;
}

/** The fields a scenario fills in; {@link finishRow} adds time, seed and failures. */
export type RowFields = Omit<ScenarioResult, 'seconds' | 'seed' | 'failures'>;

/** The row of a run that started at `started` (ms) with the failures `verdict` collected. */
export function finishRow(context: ScenarioContext, started: number, verdict: Verdict, fields: RowFields): ScenarioResult {
  return { ...fields, seconds: (Date.now() - started) / 1000, seed: context.seed, failures: verdict.failures };
}

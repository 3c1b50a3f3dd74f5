/** Runs a chaos scenario at reduced size for `npm test`, with a fixed seed (override: CHAOS_SEED). */
import { buildBundle } from '../e2e/harness.ts';
import type { Scenario, ScenarioResult } from './scenario.ts';

/** The seed of the reduced runs: fixed, so `npm test` is reproducible. */
export const REDUCED_SEED = Number(process.env['CHAOS_SEED'] ?? 20261130);

let bundle: Promise<string> | undefined;

/** Runs `scenario` reduced; the bundle is built once per test file. */
export async function runReduced(scenario: Scenario): Promise<ScenarioResult> {
  bundle ??= buildBundle();
  return scenario.run({ seed: REDUCED_SEED, scale: 'reduced', bundle: await bundle, log: () => undefined });
}

/** A failure message that says how to replay the run. */
export function replayHint(result: ScenarioResult): string {
  return `${result.id} failed (seed ${result.seed}; replay: npm run chaos -- --reduced --only ${result.id} --seed ${result.seed})`;
}

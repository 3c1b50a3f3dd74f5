/**
 * `npm run chaos`: runs the chaos scenarios (R1 kill storm, R2 fault storm, R3 leader kills, R4 API
 * unavailable, R5 bad input, Soak) one after the other and prints one table row each.
 *
 *   npm run chaos                              # full size, fresh seed (printed)
 *   npm run chaos -- --seed 42 --only R2       # replay one scenario with a seed
 *   npm run chaos -- --reduced                 # the sizes `npm test` runs
 *   npm run chaos -- --soak-minutes 2          # a shorter soak
 *
 * Each scenario of a run of several runs in a process of its own (this script with `--only` and
 * `--result-json`), as its replay does: a scenario starts from a clean heap whatever ran before it. In
 * one process the soak's load generator ran after R1–R5 and its latency tail doubled (p99 31 and 32 ms
 * in two full runs on 2026-12-01, 16 ms when replayed alone with the same seed).
 *
 * Exits 1 when a row fails.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildBundle } from '../e2e/harness.ts';
import { freshSeed } from './random.ts';
import { SCENARIOS } from './scenarios.ts';
import type { Scenario, ScenarioResult } from './scenario.ts';
import { formatTable } from './table.ts';

const { values } = parseArgs({ options: { seed: { type: 'string' }, only: { type: 'string' }, reduced: { type: 'boolean' }, 'soak-minutes': { type: 'string' }, 'result-json': { type: 'boolean' } } });
const seed = values.seed === undefined ? freshSeed() : Number(values.seed);
if (!Number.isInteger(seed) || seed < 0) throw new Error(`--seed: expected a non-negative integer, got ${values.seed}`);
const only = values.only?.split(',').map((s) => s.trim().toUpperCase());
const unknown = only?.filter((id) => !SCENARIOS.some((s) => s.id.toUpperCase() === id));
if (unknown && unknown.length > 0) throw new Error(`--only: unknown scenario ${unknown.join(', ')} (known: ${SCENARIOS.map((s) => s.id).join(', ')})`);
if (values['soak-minutes'] !== undefined) process.env['CHAOS_SOAK_MINUTES'] = values['soak-minutes'];
const runArgs = [...(values.reduced ? ['--reduced'] : []), ...(values['soak-minutes'] !== undefined ? ['--soak-minutes', values['soak-minutes']] : [])];
const selected = SCENARIOS.filter((s) => !only || only.includes(s.id.toUpperCase()));

/** A FAIL row for a scenario that gave no result of its own. */
function failed(scenario: Scenario, started: number, why: string): ScenarioResult {
  return { id: scenario.id, done: scenario.title, invariants: [], writes: '-', figures: {}, seconds: (Date.now() - started) / 1000, seed, failures: [why] };
}

/** Runs `scenario` here. A scenario that throws (a harness wait that timed out) still gets its FAIL row. */
async function runHere(scenario: Scenario, bundle: string): Promise<ScenarioResult> {
  const log = (line: string): void => void process.stderr.write(`  ${line}\n`);
  const started = Date.now();
  return scenario.run({ seed, scale: values.reduced ? 'reduced' : 'full', bundle, log }).catch((err: unknown) => failed(scenario, started, `threw: ${err instanceof Error ? err.message : String(err)}`));
}

/** Runs `scenario` in a fresh process of this script (same Node flags, so the same TypeScript loader); its progress goes to stderr. */
async function runInOwnProcess(scenario: Scenario): Promise<ScenarioResult> {
  const started = Date.now();
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--only', scenario.id, '--seed', String(seed), ...runArgs, '--result-json'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  try {
    return JSON.parse(out) as ScenarioResult;
  } catch {
    return failed(scenario, started, `its process exited with ${code} and no result`);
  }
}

if (values['result-json']) {
  if (selected.length !== 1) throw new Error('--result-json: expected exactly one scenario (--only)');
  process.stdout.write(JSON.stringify(await runHere(selected[0]!, await buildBundle())));
} else {
  const bundle = selected.length === 1 ? await buildBundle() : undefined;
  const results: ScenarioResult[] = [];
  process.stderr.write(`chaos: seed ${seed}${values.reduced ? ' (reduced)' : ''}\n`);
  for (const scenario of selected) {
    process.stderr.write(`chaos: ${scenario.id} ${scenario.title}…\n`);
    const result = bundle ? await runHere(scenario, bundle) : await runInOwnProcess(scenario);
    process.stderr.write(`chaos: ${scenario.id} ${result.failures.length === 0 ? 'PASS' : `FAIL: ${result.failures.join(' | ')}`} (${result.seconds.toFixed(0)} s)\n`);
    results.push(result);
  }
  process.stdout.write(formatTable(results, runArgs));
  process.exitCode = results.every((r) => r.failures.length === 0) ? 0 : 1;
}

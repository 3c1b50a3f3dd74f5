/**
 * `npm run chaos`: runs the chaos scenarios (R1 kill storm, R2 fault storm, R3 leader kills, R4 API
 * unavailable, R5 bad input, Soak) one after the other and prints one table row each.
 *
 *   npm run chaos                              # full size, fresh seed (printed)
 *   npm run chaos -- --seed 42 --only R2       # replay one scenario with a seed
 *   npm run chaos -- --reduced                 # the sizes `npm test` runs
 *   npm run chaos -- --soak-minutes 2          # a shorter soak
 *
 * Exits 1 when a row fails.
 */
import { parseArgs } from 'node:util';
import { buildBundle } from '../e2e/harness.ts';
import { freshSeed } from './random.ts';
import { SCENARIOS } from './scenarios.ts';
import type { ScenarioResult } from './scenario.ts';
import { formatTable } from './table.ts';

const USAGE = `usage: npm run chaos -- [--seed N] [--only R1,R2,R3,R4,R5,Soak] [--reduced] [--soak-minutes M]
  --seed N           replay a run (the seed is printed at the start and on every row)
  --only IDS         run only these scenarios, comma-separated
  --reduced          the sizes npm test runs
  --soak-minutes M   the soak's length (default 10)
Exit 0 when every row passes, 1 when one fails, 2 on a bad command line.
`;

const OPTIONS = { seed: { type: 'string' }, only: { type: 'string' }, reduced: { type: 'boolean' }, 'soak-minutes': { type: 'string' }, help: { type: 'boolean', short: 'h' } } as const;

function parseCommandLine(): ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>> {
  try {
    return parseArgs({ options: OPTIONS });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}`);
    process.exit(2);
  }
}

const { values } = parseCommandLine();
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const seed = values.seed === undefined ? freshSeed() : Number(values.seed);
if (!Number.isInteger(seed) || seed < 0) throw new Error(`--seed: expected a non-negative integer, got ${values.seed}`);
const only = values.only?.split(',').map((s) => s.trim().toUpperCase());
const unknown = only?.filter((id) => !SCENARIOS.some((s) => s.id.toUpperCase() === id));
if (unknown && unknown.length > 0) throw new Error(`--only: unknown scenario ${unknown.join(', ')} (known: ${SCENARIOS.map((s) => s.id).join(', ')})`);
if (values['soak-minutes'] !== undefined) process.env['CHAOS_SOAK_MINUTES'] = values['soak-minutes'];

const bundle = await buildBundle();
const results: ScenarioResult[] = [];
process.stderr.write(`chaos: seed ${seed}${values.reduced ? ' (reduced)' : ''}\n`);
for (const scenario of SCENARIOS) {
  if (only && !only.includes(scenario.id.toUpperCase())) continue;
  process.stderr.write(`chaos: ${scenario.id} ${scenario.title}…\n`);
  const log = (line: string): void => void process.stderr.write(`  ${line}\n`);
  const started = Date.now();
  // A scenario that throws (a harness wait that timed out) still gets its FAIL row; the others run.
  const result = await scenario.run({ seed, scale: values.reduced ? 'reduced' : 'full', bundle, log }).catch((err: unknown): ScenarioResult => ({
    id: scenario.id, done: scenario.title, invariants: [], writes: '-', figures: {}, seconds: (Date.now() - started) / 1000, seed,
    failures: [`threw: ${err instanceof Error ? err.message : String(err)}`],
  }));
  process.stderr.write(`chaos: ${scenario.id} ${result.failures.length === 0 ? 'PASS' : `FAIL: ${result.failures.join(' | ')}`} (${result.seconds.toFixed(0)} s)\n`);
  results.push(result);
}
const runArgs = [...(values.reduced ? ['--reduced'] : []), ...(values['soak-minutes'] !== undefined ? ['--soak-minutes', values['soak-minutes']] : [])];
// Exits once the table is out rather than when the event loop drains: after a full run whose soak
// failed (seed 20261208), the process printed its table and then spun at full CPU in Node's teardown
// (FreeEnvironment → CleanupHandles, waiting on a handle of the run's) until killed 3 minutes later.
const code = results.every((r) => r.failures.length === 0) ? 0 : 1;
process.stdout.write(formatTable(results, runArgs), () => process.exit(code));

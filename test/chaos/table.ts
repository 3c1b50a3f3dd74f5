/** The `npm run chaos` table: one Markdown row per scenario, with its figures and failures below. */
import type { ScenarioResult } from './scenario.ts';

/**
 * The results as a Markdown table, followed by each row's figures and, for a failing row, its
 * violations and the command that replays it (`runArgs`: the run's flags beyond seed and scenario,
 * such as `--reduced`, so the replay has the same sizes).
 */
export function formatTable(results: readonly ScenarioResult[], runArgs: readonly string[] = []): string {
  const header = '| scenario | what was done | invariants checked | writes (total / minimal) | time | seed | result |\n|---|---|---|---|---|---|---|';
  const rows = results.map((r) =>
    `| ${r.id} | ${r.done} | ${r.invariants.join('; ')} | ${r.writes} | ${r.seconds.toFixed(0)} s | ${r.seed} | ${r.failures.length === 0 ? 'PASS' : 'FAIL'} |`,
  );
  const details = results.map((r) => {
    const figures = Object.entries(r.figures).map(([k, v]) => `${k}: ${v}`).join(' · ');
    const failures = r.failures.map((f) => `\n  - FAIL: ${f}`).join('');
    return `- ${r.id}: ${figures}${failures}${r.failures.length > 0 ? `\n  - replay: npm run chaos -- ${[...runArgs, '--only', r.id, '--seed', String(r.seed)].join(' ')}` : ''}`;
  });
  return `${header}\n${rows.join('\n')}\n\n${details.join('\n')}\n`;
}

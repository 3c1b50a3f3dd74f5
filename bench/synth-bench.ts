/**
 * `npm run bench:synth`: wall time of `npm run synth` (tsx src/manifests/main.ts) against a
 * three-object cdk8s app run the same way (bench/three-object-app.ts), both warm (one discarded run
 * each first), alternating, in separate processes writing to temporary folders. Prints each median and
 * their ratio; the target is ≤ 1.5.
 *
 * Options: `--runs N` (default 7).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TSX = join(ROOT, 'node_modules/tsx/dist/cli.mjs');
const { values } = parseArgs({ options: { runs: { type: 'string', default: '7' } } });
const RUNS = Number(values.runs);

/** Wall milliseconds of one `node tsx <entry>` run writing into a fresh folder. */
function timeRun(entry: string): number {
  const outdir = mkdtempSync(join(tmpdir(), 'synth-bench-'));
  const started = performance.now();
  const result = spawnSync(process.execPath, [TSX, entry], { cwd: ROOT, env: { ...process.env, CDK8S_OUTDIR: outdir }, encoding: 'utf8' });
  const ms = performance.now() - started;
  rmSync(outdir, { recursive: true, force: true });
  if (result.status !== 0) throw new Error(`${entry} failed: ${result.stderr}`);
  return ms;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const entries = { synth: 'src/manifests/main.ts', threeObjects: 'bench/three-object-app.ts' } as const;
for (const entry of Object.values(entries)) timeRun(entry);
const times: Record<keyof typeof entries, number[]> = { synth: [], threeObjects: [] };
for (let i = 0; i < RUNS; i++) {
  times.synth.push(timeRun(entries.synth));
  times.threeObjects.push(timeRun(entries.threeObjects));
}
const synth = median(times.synth);
const three = median(times.threeObjects);
console.log(`npm run synth          median ${synth.toFixed(0)} ms  (runs: ${times.synth.map((t) => t.toFixed(0)).join(', ')})`);
console.log(`three-object cdk8s app median ${three.toFixed(0)} ms  (runs: ${times.threeObjects.map((t) => t.toFixed(0)).join(', ')})`);
console.log(`ratio ${(synth / three).toFixed(2)} (target ≤ 1.5)`);

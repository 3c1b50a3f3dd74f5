/**
 * `npm run bench:synth`: wall time of `npm run synth` (tsx src/manifests/main.ts) against a
 * three-object cdk8s app run the same way (bench/three-object-app.ts), both warm (one discarded run
 * each first), alternating, in separate processes writing to temporary folders. Prints each median and
 * their ratio; the target is ≤ 1.5. On Linux it also prints the children's CPU time (user + system,
 * from /proc/self/stat), which other processes on a shared machine disturb less than wall time.
 *
 * Options: `--runs N` (default 7).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { childrenCpuMs } from './child-cpu.ts';
import { median } from './stats.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TSX = join(ROOT, 'node_modules/tsx/dist/cli.mjs');
const { values } = parseArgs({ options: { runs: { type: 'string', default: '7' } } });
const RUNS = Number(values.runs);

/** Wall and CPU milliseconds of one `node tsx <entry>` run writing into a fresh folder. */
function timeRun(entry: string): { wall: number; cpu: number } {
  const outdir = mkdtempSync(join(tmpdir(), 'synth-bench-'));
  const cpuBefore = childrenCpuMs();
  const started = performance.now();
  const result = spawnSync(process.execPath, [TSX, entry], { cwd: ROOT, env: { ...process.env, CDK8S_OUTDIR: outdir }, encoding: 'utf8' });
  const wall = performance.now() - started;
  const cpu = childrenCpuMs() - cpuBefore;
  rmSync(outdir, { recursive: true, force: true });
  if (result.status !== 0) throw new Error(`${entry} failed: ${result.stderr}`);
  return { wall, cpu };
}

const entries = { synth: 'src/manifests/main.ts', threeObjects: 'bench/three-object-app.ts' } as const;
for (const entry of Object.values(entries)) timeRun(entry);
const runs: Record<keyof typeof entries, { wall: number; cpu: number }[]> = { synth: [], threeObjects: [] };
for (let i = 0; i < RUNS; i++) {
  runs.synth.push(timeRun(entries.synth));
  runs.threeObjects.push(timeRun(entries.threeObjects));
}
const wall = (name: keyof typeof entries): number => median(runs[name].map((r) => r.wall));
const cpu = (name: keyof typeof entries): number => median(runs[name].map((r) => r.cpu));
for (const [name, label] of [['synth', 'npm run synth         '], ['threeObjects', 'three-object cdk8s app']] as const) {
  console.log(`${label} median wall ${wall(name).toFixed(0)} ms, CPU ${cpu(name).toFixed(0)} ms  (wall runs: ${runs[name].map((r) => r.wall.toFixed(0)).join(', ')})`);
}
console.log(`ratio: wall ${(wall('synth') / wall('threeObjects')).toFixed(2)}, CPU ${(cpu('synth') / cpu('threeObjects')).toFixed(2)} (target ≤ 1.5)`);

/**
 * `npm run bench:validate`: wall time of `backupschedule validate` on N BackupSchedules in one
 * multi-document YAML file (default 1,000; a tenth of them invalid, so errors and their line numbers are
 * part of the work), run as a consumer runs it: the bundled bin (build/package/cli.mjs, built first)
 * in its own Node process, start-up included. Best and median of `--runs` runs.
 *
 * Options: `--schedules N` (default 1000), `--runs N` (default 5).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { buildPackage, CLI_BUNDLE } from '../scripts/build-package.ts';
import { childrenCpuMs } from './child-cpu.ts';
import { median } from './stats.ts';

const { values } = parseArgs({ options: { schedules: { type: 'string', default: '1000' }, runs: { type: 'string', default: '5' } } });
const N = Number(values.schedules);
const RUNS = Number(values.runs);
const ZONES = ['Etc/UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Tokyo'];

/** The i-th schedule: varied names, namespaces, cron expressions and zones; every tenth has keepLast out of bounds. */
function schedule(i: number): unknown {
  return {
    apiVersion: 'kubelings.dev/v1alpha1',
    kind: 'BackupSchedule',
    metadata: { name: `backup-${i}`, namespace: `team-${i % 40}` },
    spec: {
      schedule: `${i % 60} ${i % 24} * * ${i % 7}`,
      timeZone: ZONES[i % ZONES.length],
      source: i % 2 === 0 ? { etcd: { endpoints: [`https://etcd-${i % 3}.etcd:2379`], tlsSecretName: 'etcd-tls' } } : { persistentVolumeClaim: { claimName: `data-${i}` } },
      destination: { persistentVolumeClaim: { claimName: 'backups', path: `team/${i}` } },
      retention: { keepLast: i % 10 === 0 ? 5000 : 7 },
    },
  };
}

await buildPackage();
const dir = mkdtempSync(join(tmpdir(), 'validate-bench-'));
const file = join(dir, 'schedules.yaml');
writeFileSync(file, Array.from({ length: N }, (_, i) => stringify(schedule(i))).join('---\n'));
const times: number[] = [];
const cpus: number[] = [];
for (let run = 0; run <= RUNS; run++) {
  const cpuBefore = childrenCpuMs();
  const started = performance.now();
  const result = spawnSync(process.execPath, [CLI_BUNDLE, 'validate', file], { encoding: 'utf8' });
  const ms = performance.now() - started;
  if (result.status !== 1 || !result.stderr.includes(`${N} BackupSchedule(s)`)) throw new Error(`unexpected result: ${result.status} ${result.stderr}`);
  // The first run warms the file cache.
  if (run > 0) {
    times.push(ms);
    cpus.push(childrenCpuMs() - cpuBefore);
  }
}
rmSync(dir, { recursive: true, force: true });
const wall = median(times);
console.log(`backupschedule validate, ${N} BackupSchedules (${N / 10} invalid), process start included:`);
console.log(`  wall: best ${Math.min(...times).toFixed(0)} ms, median ${wall.toFixed(0)} ms → ${Math.round((N / wall) * 1000).toLocaleString('en')} schedules/s; CPU median ${median(cpus).toFixed(0)} ms`);

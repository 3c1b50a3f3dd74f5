/**
 * `npm run bench:backup`: the backup runner against `etcdctl snapshot save` on the same etcd, in the
 * same run, over the same mutual TLS; and the volume archive rate.
 *
 * Targets (issue "The backup itself"): runner wall time ≤ 1.2 × etcdctl's for a database of at least
 * 200 MB, runner peak RSS ≤ 100 MiB whatever the database size. Prints one JSON line with both times,
 * the ratio, the runner's peak RSS (its own `maxRssMiB`, from getrusage) and the archive MB/s.
 *
 *   npm run bench:backup                               # 200 MB database, 200 MB volume, best of 3
 *   npm run bench:backup -- --db-mb 50 --volume-mb 50 --repeat 1
 *   npm run bench:backup -- --object-store [--db-mb 200,1000] [--repeat 2]   # bench/backup-object-store-bench.ts
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { execFile } from 'node:child_process';
import { parseArgs, promisify } from 'node:util';
import { EtcdHarness, makeCerts, requireEtcd, writeKeys } from '../test/backup/etcd-harness.ts';
import { buildRunnerBundle, runRunner } from '../test/backup/runner-process.ts';

const sh = promisify(execFile);
const USAGE = `Usage: npm run bench:backup -- [--db-mb N] [--volume-mb N] [--repeat N]
  --db-mb N      etcd database size to fill, MB (default 200)
  --volume-mb N  volume to archive, MB: half random, half log-like text, files of 1-16 MB (default 200)
  --repeat N     runner and etcdctl snapshot runs each, best of N (default 3)
  --object-store the runner streaming to a real S3 server (Swift) against etcdctl snapshot save + rclone;
                 --db-mb takes a list (default 200,1000), --repeat defaults to 2 (needs Swift, rclone, age)
Needs etcd, etcdctl and openssl on PATH. Prints one JSON line: snapshot times (runner vs etcdctl),
the runner's peak RSS and CPU, the volume archive's MB/s and peak RSS.
`;
// A bad flag prints the usage (exit 2), --help prints it (exit 0): parseArgs' own throw was a stack trace.
let parsed;
try {
  parsed = parseArgs({ options: { 'db-mb': { type: 'string' }, 'volume-mb': { type: 'string' }, repeat: { type: 'string' }, help: { type: 'boolean', short: 'h' }, 'object-store': { type: 'boolean' } } });
} catch (err) {
  process.stderr.write(`error: ${(err as Error).message}\n\n${USAGE}`);
  process.exit(2);
}
const { values } = parsed;
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
if (values['object-store']) {
  // The runner into a real S3 server against etcdctl + rclone: bench/backup-object-store-bench.ts.
  await (await import('./backup-object-store-bench.ts')).objectStoreBench((values['db-mb'] ?? '200,1000').split(',').map(Number), Number(values.repeat ?? '2'));
  process.exit(0);
}
const dbMb = Number(values['db-mb'] ?? '200');
const volumeMb = Number(values['volume-mb'] ?? '200');
const repeat = Number(values.repeat ?? '3');

requireEtcd();
const harness = new EtcdHarness();
let bundle: string | undefined;
try {
  const certs = await makeCerts(join(harness.root, 'pki'));
  bundle = await buildRunnerBundle();
  const etcd = await harness.start({ certs, quotaBytes: 8 * 1024 ** 3 });
  // 100 KB values, 10 per transaction (1 MB, under etcd's 1.5 MiB request limit).
  const fillStarted = performance.now();
  // 5 % more values than the target: bbolt packs 100 KB values a little tighter than their sum.
  await writeKeys(harness, etcd, certs, Math.ceil((dbMb * 1.05e6) / 100_000), { prefix: 'bench/', valueBytes: 100_000, batch: 10, parallel: 2 });
  const status = JSON.parse(await harness.etcdctl(etcd, certs, ['endpoint', 'status', '-w', 'json'])) as { Status: { dbSize: number } }[];
  const dbSize = status[0]!.Status.dbSize;
  const fillSec = (performance.now() - fillStarted) / 1000;

  const tls = join(harness.root, 'tls');
  mkdirSync(tls);
  copyFileSync(certs.ca, join(tls, 'ca.crt'));
  copyFileSync(certs.clientCert, join(tls, 'tls.crt'));
  copyFileSync(certs.clientKey, join(tls, 'tls.key'));
  const env = { BACKUP_SCHEDULE_NAME: 'bench', BACKUP_SCHEDULE_NAMESPACE: 'bench', TMPDIR: harness.root };

  const etcdctlMs: number[] = [];
  const runnerMs: number[] = [];
  const runnerRss: number[] = [];
  const etcdctlCpu: number[] = [];
  const runnerCpu: number[] = [];
  for (let i = 0; i < repeat; i++) {
    // Alternate the order so neither always runs with a warmer page cache.
    for (const who of i % 2 === 0 ? ['etcdctl', 'runner'] : ['runner', 'etcdctl']) {
      const dest = join(harness.root, `out-${who}-${i}`);
      mkdirSync(dest);
      const started = performance.now();
      if (who === 'etcdctl') {
        // bash's `time` gives etcdctl's CPU seconds (user + sys), comparable with the runner's cpuSec.
        const { stderr } = await sh('bash', ['-c', `TIMEFORMAT='%U %S'; time ETCDCTL_API=3 etcdctl --endpoints=${etcd.endpoint} --cacert=${certs.ca} --cert=${certs.clientCert} --key=${certs.clientKey} snapshot save ${join(dest, 'snap.db')} >/dev/null 2>&1`]);
        etcdctlMs.push(performance.now() - started);
        const [user, system] = stderr.trim().split('\n').at(-1)!.split(' ').map(Number) as [number, number];
        etcdctlCpu.push(user + system);
      } else {
        const result = await runRunner(bundle, ['backup', '--source=etcd', `--etcd-endpoints=${etcd.endpoint}`, `--etcd-tls-dir=${tls}`, `--destination-dir=${dest}`, '--keep-last=1'], env);
        runnerMs.push(performance.now() - started);
        if (result.code !== 0) throw new Error(`runner exited ${result.code}: ${result.stdout}${result.stderr}`);
        runnerRss.push(Number(result.records.at(-1)!['maxRssMiB']));
        runnerCpu.push(Number(result.records.at(-1)!['cpuSec']));
      }
      rmSync(dest, { recursive: true, force: true });
    }
  }

  // Volume: half incompressible (database pages), half text-like (logs), in files of 1–16 MB.
  const source = join(harness.root, 'volume');
  mkdirSync(source);
  let written = 0;
  for (let i = 0; written < volumeMb * 1e6; i++) {
    const size = Math.min(volumeMb * 1e6 - written, (1 + (i % 16)) * 1e6);
    const data = i % 2 === 0 ? randomBytes(size) : Buffer.from(Array.from({ length: Math.ceil(size / 64) }, (_, j) => `${i} ${j} INFO request served in ${j % 97} ms\n`.padEnd(64, '.')).join('').slice(0, size));
    writeFileSync(join(source, `f${i}.bin`), data);
    written += size;
  }
  const volumeDest = join(harness.root, 'volume-out');
  const volumeStarted = performance.now();
  const volume = await runRunner(bundle, ['backup', '--source=pvc', `--source-dir=${source}`, `--destination-dir=${volumeDest}`, '--keep-last=1'], env);
  const volumeSec = (performance.now() - volumeStarted) / 1000;
  if (volume.code !== 0) throw new Error(`volume runner exited ${volume.code}: ${volume.stdout}${volume.stderr}`);
  const archive = readdirSync(volumeDest).find((f) => f.endsWith('.tar.gz'))!;

  const best = (xs: number[]): number => Math.min(...xs);
  console.log(JSON.stringify({
    dbSizeMB: Math.round(dbSize / 1e6),
    fillSec: Math.round(fillSec),
    etcdctlSnapshotSec: Math.round(best(etcdctlMs)) / 1000,
    runnerSnapshotSec: Math.round(best(runnerMs)) / 1000,
    runnerOverEtcdctl: Math.round((best(runnerMs) / best(etcdctlMs)) * 100) / 100,
    runnerMaxRssMiB: Math.max(...runnerRss),
    // CPU seconds do not depend on what else runs on the machine, wall time does.
    etcdctlCpuSec: Math.round(best(etcdctlCpu) * 100) / 100,
    runnerCpuSec: best(runnerCpu),
    runs: { etcdctlMs: etcdctlMs.map(Math.round), runnerMs: runnerMs.map(Math.round) },
    volumeMB: volumeMb,
    volumeArchiveSec: Math.round(volumeSec * 10) / 10,
    volumeMBPerSec: Math.round((volumeMb / volumeSec) * 10) / 10,
    volumeCompressedMB: Math.round(statSync(join(volumeDest, archive)).size / 1e6),
    volumeRunnerMaxRssMiB: volume.records.at(-1)!['maxRssMiB'],
    targets: { ratio: '≤ 1.2', rssMiB: '≤ 100' },
  }));
} finally {
  await harness.stopAll();
  if (bundle) rmSync(dirname(bundle), { recursive: true, force: true });
}

/**
 * `npm run bench:backup -- --object-store`: the runner streaming an etcd snapshot through zstd and age
 * into a real S3 server (Swift + s3api, test/backup/s3-server.ts) against the two-step pipeline it
 * replaces, `etcdctl snapshot save` then a stock upload of that file (`rclone copyto`, Debian's rclone,
 * its defaults: 5 MiB parts, 4 at a time), alternating runs in one invocation, on the same etcd.
 *
 * Targets (issue 29): runner wall time ≤ 1.0 × the two-step pipeline's, runner peak RSS ≤ 128 MiB, at
 * ~200 MB and ~1 GB. The database holds random base64 values (zstd takes them to ~75 %: real etcd
 * data, protobuf Kubernetes objects, compresses far better, so this is the harder case for the runner).
 *
 *   npm run bench:backup -- --object-store                    # 200 MB and 1 GB, 2 rounds each
 *   npm run bench:backup -- --object-store --db-mb 200 --repeat 3
 */
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { DeleteObjectsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { EtcdHarness, requireEtcd, type EtcdMember } from '../test/backup/etcd-harness.ts';
import { buildRunnerBundle, runRunner } from '../test/backup/runner-process.ts';
import { requireSwift, SWIFT_CREDENTIALS, SwiftS3 } from '../test/backup/s3-server.ts';

const sh = promisify(execFile);
const BUCKET = 'bench';

/** Fills etcd up to `mb` MB with 100 KB random base64 values, 10 per transaction. */
async function fill(harness: EtcdHarness, etcd: EtcdMember, mb: number, from: number): Promise<number> {
  const dir = join(harness.root, 'fill');
  mkdirSync(dir, { recursive: true });
  const count = Math.ceil((mb * 1.05e6) / 100_000);
  let next = from;
  await Promise.all(Array.from({ length: 2 }, async (_, worker) => {
    while (next < from + count) {
      const start = next;
      next += 10;
      const ops = Array.from({ length: Math.min(10, from + count - start) }, (_, i) => `put bench/${String(start + i).padStart(8, '0')} ${randomBytes(75_000).toString('base64')}`);
      const file = join(dir, `${worker}.txt`);
      writeFileSync(file, `\n${ops.join('\n')}\n\n\n`);
      await sh('sh', ['-c', `ETCDCTL_API=3 etcdctl --endpoints=${etcd.endpoint} txn < ${file}`], { maxBuffer: 1 << 24 });
    }
  }));
  return from + count;
}

async function emptyBucket(swift: SwiftS3): Promise<void> {
  const client = swift.client();
  try {
    const listed = await client.send(new ListObjectsV2Command({ Bucket: BUCKET }));
    const keys = (listed.Contents ?? []).map((o) => ({ Key: o.Key! }));
    if (keys.length > 0) {
      client.middlewareStack.add((next, ctx) => async (args) => {
        const req = args.request as { headers: Record<string, string>; body: string };
        if (ctx.commandName === 'DeleteObjectsCommand') req.headers['content-md5'] = (await import('node:crypto')).createHash('md5').update(req.body).digest('base64');
        return next(args);
      }, { step: 'build' });
      await client.send(new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: keys } }));
    }
  } finally {
    client.destroy();
  }
}

/** Runs the object-store benchmark; prints one JSON line per size. */
export async function objectStoreBench(sizesMb: readonly number[], repeat: number): Promise<void> {
  requireEtcd();
  requireSwift();
  if (spawnSync('sh', ['-c', 'command -v rclone && command -v age-keygen']).status !== 0) throw new Error('the object-store bench compares with rclone and needs age-keygen: `apt-get install -y rclone age`');
  const harness = new EtcdHarness();
  const swift = new SwiftS3(join(harness.root, 'swift'));
  let bundle: string | undefined;
  try {
    [bundle] = await Promise.all([buildRunnerBundle(), swift.start()]);
    await swift.createBucket(BUCKET);
    const etcd = await harness.start({ quotaBytes: 8 * 1024 ** 3 });
    const identity = join(harness.root, 'key.txt');
    await sh('age-keygen', ['-o', identity]);
    const recipient = (await sh('age-keygen', ['-y', identity])).stdout.trim();
    const rclone = { RCLONE_CONFIG_SWIFT_TYPE: 's3', RCLONE_CONFIG_SWIFT_PROVIDER: 'Other', RCLONE_CONFIG_SWIFT_ENDPOINT: swift.endpoint, RCLONE_CONFIG_SWIFT_ACCESS_KEY_ID: SWIFT_CREDENTIALS.AWS_ACCESS_KEY_ID, RCLONE_CONFIG_SWIFT_SECRET_ACCESS_KEY: SWIFT_CREDENTIALS.AWS_SECRET_ACCESS_KEY, RCLONE_CONFIG_SWIFT_REGION: 'us-east-1', RCLONE_CONFIG_SWIFT_FORCE_PATH_STYLE: 'true' };
    const env = { BACKUP_SCHEDULE_NAME: 'bench', BACKUP_SCHEDULE_NAMESPACE: 'bench', TMPDIR: harness.root, ...SWIFT_CREDENTIALS };
    let keys = 0;
    let filledMb = 0;
    for (const mb of sizesMb) {
      const fillStarted = performance.now();
      keys = await fill(harness, etcd, mb - filledMb, keys);
      filledMb = mb;
      const status = JSON.parse(await harness.etcdctl(etcd, undefined, ['endpoint', 'status', '-w', 'json'])) as { Status: { dbSize: number } }[];
      const dbSize = status[0]!.Status.dbSize;
      const fillSec = (performance.now() - fillStarted) / 1000;
      const twoStepMs: number[] = [];
      const saveMs: number[] = [];
      const runnerMs: number[] = [];
      const runnerRss: number[] = [];
      const objectMb: number[] = [];
      for (let i = 0; i < repeat; i++) {
        for (const who of i % 2 === 0 ? ['two-step', 'runner'] : ['runner', 'two-step']) {
          await emptyBucket(swift);
          const started = performance.now();
          if (who === 'two-step') {
            const file = join(harness.root, 'snap.db');
            await sh('sh', ['-c', `ETCDCTL_API=3 etcdctl --endpoints=${etcd.endpoint} snapshot save ${file} >/dev/null 2>&1`]);
            saveMs.push(performance.now() - started);
            await sh('rclone', ['copyto', file, `swift:${BUCKET}/two-step/snap.db`], { env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/', ...rclone } });
            twoStepMs.push(performance.now() - started);
            rmSync(file, { force: true });
          } else {
            const result = await runRunner(bundle, ['backup', '--source=etcd', `--etcd-endpoints=${etcd.endpoint}`, `--destination-url=s3://${BUCKET}/runner`, `--s3-endpoint=${swift.endpoint}`, '--s3-allow-http', '--s3-force-path-style', `--age-recipient=${recipient}`, '--keep-last=1'], env);
            runnerMs.push(performance.now() - started);
            if (result.code !== 0) throw new Error(`runner exited ${result.code}: ${result.stdout}${result.stderr}`);
            const summary = result.records.at(-1)!;
            runnerRss.push(Number(summary['maxRssMiB']));
            objectMb.push(Math.round(Number(summary['size']) / 1e6));
          }
        }
      }
      const best = (xs: number[]): number => Math.min(...xs);
      console.log(JSON.stringify({
        dbSizeMB: Math.round(dbSize / 1e6),
        fillSec: Math.round(fillSec),
        twoStepSec: Math.round(best(twoStepMs)) / 1000,
        etcdctlSaveSec: Math.round(best(saveMs)) / 1000,
        runnerSec: Math.round(best(runnerMs)) / 1000,
        runnerOverTwoStep: Math.round((best(runnerMs) / best(twoStepMs)) * 100) / 100,
        runnerMaxRssMiB: Math.max(...runnerRss),
        objectMB: objectMb[0],
        runs: { twoStepMs: twoStepMs.map(Math.round), runnerMs: runnerMs.map(Math.round), runnerRssMiB: runnerRss },
        targets: { ratio: '≤ 1.0', rssMiB: '≤ 128' },
      }));
    }
  } finally {
    await Promise.all([harness.stopAll(), swift.stop()]);
    if (bundle) rmSync(dirname(bundle), { recursive: true, force: true });
  }
}

/**
 * How often the runner forces a scavenge, by source (src/backup/main.ts): the policy, and the image's
 * runner against a real etcd counting its forced GCs. Apart from v8-flags.test.ts: importing the
 * runner's entry loads gRPC and the rest, and the GCs that starts would disturb that file's count of
 * minor GCs.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FLOW_CONTROL_WINDOW } from '../../src/backup/etcd-snapshot.ts';
import { WRITE_BATCH_BYTES } from '../../src/backup/file-sink.ts';
import { scavengeIntervalBytes } from '../../src/backup/main.ts';
import { EtcdHarness, requireEtcd, writeKeys, type EtcdMember } from './etcd-harness.ts';
import { buildRunnerBundle, killLeftoverRunners, runRunner } from './runner-process.ts';

describe('scavengeIntervalBytes', () => {
  it('scavenges a plain etcd snapshot once per HTTP/2 receive window, never twice over the same chunks in flight', () => {
    // A window of chunks is in flight (received, not yet written) at any time; a shorter interval only
    // copies them again (211 MB at 1 MiB: 200 scavenges, 8 full GCs, peak RSS up to 100 MiB).
    expect(scavengeIntervalBytes('etcd', false)).toBeGreaterThanOrEqual(FLOW_CONTROL_WINDOW);
    // Still often enough for dead chunks to be freed within a few write batches (the RSS bound).
    expect(scavengeIntervalBytes('etcd', false)).toBeLessThanOrEqual(FLOW_CONTROL_WINDOW + WRITE_BATCH_BYTES);
  });

  it('scavenges every 1 MiB a volume archive (peak RSS 97 MiB at 4 MiB, 87-89 at 1 MiB) and whatever goes through the encode pipeline', () => {
    expect(scavengeIntervalBytes('pvc', false)).toBe(1 << 20);
    expect(scavengeIntervalBytes('pvc', true)).toBe(1 << 20);
    expect(scavengeIntervalBytes('etcd', true)).toBe(1 << 20);
  });
});

describe('the runner process against a real etcd', () => {
  const harness = new EtcdHarness();
  let bundle: string;
  let etcd: EtcdMember;

  beforeAll(async () => {
    requireEtcd();
    [bundle, etcd] = await Promise.all([buildRunnerBundle(), harness.start()]);
    // About 25 MB: 240 values of 100 KB, 10 per transaction.
    await writeKeys(harness, etcd, undefined, 240, { prefix: 'gc/', valueBytes: 100_000, batch: 10, parallel: 2 });
  }, 120_000);

  afterEach(killLeftoverRunners);

  afterAll(async () => {
    await harness.stopAll();
    if (bundle) rmSync(dirname(bundle), { recursive: true, force: true });
  });

  it('forces one GC per HTTP/2 receive window of a plain snapshot written, counted from V8\'s own trace', async () => {
    const destination = mkdtempSync(join(harness.root, 'dest-'));
    const env = { BACKUP_SCHEDULE_NAME: 'gc', BACKUP_SCHEDULE_NAMESPACE: 'test', TMPDIR: harness.root };
    const result = await runRunner(bundle, ['backup', '--source=etcd', `--etcd-endpoints=${etcd.endpoint}`, `--destination-dir=${destination}`, '--keep-last=1'], env, { nodeFlags: ['--trace-gc'] });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const snapshot = readdirSync(destination).find((file) => file.endsWith('.db'));
    expect(snapshot).toBeDefined();
    const size = statSync(join(destination, snapshot ?? '')).size;
    expect(size).toBeGreaterThan(8 * FLOW_CONTROL_WINDOW);
    // V8 traces every gc() call with the reason "testing": a scavenge, or a full GC when it finalizes
    // an incremental marking in progress. The runner calls gc() for nothing else.
    const forced = result.stdout.split('\n').filter((line) => /: (?:Scavenge|Mark-Compact)\b.*\) testing;/.test(line)).length;
    // Written in batches of at least WRITE_BATCH_BYTES, and each interval starts afresh.
    expect(forced).toBeGreaterThanOrEqual(Math.floor(size / (FLOW_CONTROL_WINDOW + WRITE_BATCH_BYTES)));
    expect(forced).toBeLessThanOrEqual(Math.floor(size / FLOW_CONTROL_WINDOW));
  }, 120_000);
});

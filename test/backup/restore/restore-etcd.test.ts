/**
 * An etcd snapshot taken from a real etcd (`etcdctl snapshot save`), restored by `backup restore` as the
 * `.db` file, is what `etcdctl snapshot restore` takes: the etcd started on the restored data directory
 * serves every key. A snapshot damaged after its sidecar was written is refused, nothing written.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_REFUSED, runRestore, type RestoreCommand } from '../../../src/backup/restore/run-restore.ts';
import { silentLogger } from '../../../src/runtime/logger.ts';
import { putVerified } from '../backup-fixtures.ts';
import { EtcdHarness, freePort, readKeys, requireEtcd, writeKeys, type EtcdMember } from '../etcd-harness.ts';

describe('backup restore of an etcd snapshot', () => {
  const harness = new EtcdHarness();
  let etcd: EtcdMember;
  let keys: Map<string, string>;
  let backups: string;
  let snapshot: Buffer;
  const FILE = 'etcd-20261201T010000Z.db';

  beforeAll(async () => {
    requireEtcd();
    etcd = await harness.start();
    keys = await writeKeys(harness, etcd, undefined, 200, { prefix: 'restore/' });
    backups = join(harness.root, 'backups');
    mkdirSync(backups);
    const saved = join(harness.root, 'saved.db');
    await harness.etcdctl(etcd, undefined, ['snapshot', 'save', saved]);
    snapshot = readFileSync(saved);
    putVerified(backups, FILE, snapshot);
  }, 60_000);
  afterAll(() => harness.stopAll());

  const command = (targetDir: string, backup = 'latest'): RestoreCommand => ({ kind: 'restore', from: backups, backup, schedule: 'etcd', targetDir, overwrite: false, allowIncomplete: false });

  it('writes the verified .db that etcdctl snapshot restore takes', async () => {
    const target = join(harness.root, 'target');
    const outcome = await runRestore(command(target), { logger: silentLogger });
    expect(outcome.message).toBe(`restored ${FILE} into ${target}`);
    expect(outcome.exitCode).toBe(0);
    expect(readdirSync(target)).toEqual([FILE]);
    expect(readFileSync(join(target, FILE)).equals(snapshot)).toBe(true);
    const peerPort = await freePort();
    const dataDir = join(harness.root, 'restored');
    await harness.etcdctl(etcd, undefined, ['snapshot', 'restore', join(target, FILE), '--data-dir', dataDir, '--name', 'restored', '--initial-cluster', `restored=http://127.0.0.1:${peerPort}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${peerPort}`]);
    const restored = await harness.start({ dataDir, name: 'restored', peerPort });
    expect(await readKeys(harness, restored, undefined, 'restore/')).toEqual(keys);
    // The file exists now: a second restore refuses to replace it.
    expect((await runRestore(command(target), { logger: silentLogger })).exitCode).toBe(1);
    expect((await runRestore({ ...command(target), overwrite: true }, { logger: silentLogger })).exitCode).toBe(0);
  }, 60_000);

  it('refuses a snapshot damaged after its sidecar was written', async () => {
    const damaged = Buffer.from(snapshot);
    damaged[damaged.length - 100]! ^= 1;
    const file = 'etcd-20261201T020000Z.db';
    putVerified(backups, file, damaged);
    const target = join(harness.root, 'target-damaged');
    const outcome = await runRestore(command(target, file), { logger: silentLogger });
    expect(outcome.exitCode).toBe(EXIT_REFUSED);
    expect(outcome.message).toMatch(/not a valid etcd snapshot/);
    // Refused before the target directory was even created.
    expect(existsSync(target)).toBe(false);
  });
});

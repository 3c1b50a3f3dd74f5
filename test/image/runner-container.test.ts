/**
 * The image's `backup` runner as a container (runc, as root), run from the Pod specs the operator builds
 * (buildCronJob, buildRestoreJob) as kubelet would: uid 65532, read-only root file system, no
 * capabilities, the claims as bind-mounted folders, Secrets as files of their defaultMode and the
 * fsGroup, credentials as env from secretKeyRefs, /tmp an emptyDir. It snapshots a real etcd 3.4 over
 * mutual TLS into a claim and into a Swift bucket (zstd-compressed there), and `etcdctl snapshot
 * restore` of what it wrote serves every key; a Restore extracts a volume archive into its target claim.
 */
import { execFile } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Restore } from '../../imports/restore.ts';
import type { v1 } from '../../src/api/index.ts';
import { BACKUP_USER_ID } from '../../src/pure/backup-contract.ts';
import { buildCronJob } from '../../src/pure/index.ts';
import { buildRestoreJob } from '../../src/pure/restore-job.ts';
import { EtcdHarness, freePort, makeCerts, readKeys, requireEtcd, writeKeys, type Certs, type EtcdMember } from '../backup/etcd-harness.ts';
import { runnerArchive } from '../backup/restore/restore-fixtures.ts';
import { requireSwift, SWIFT_CREDENTIALS, SwiftS3 } from '../backup/s3-server.ts';
import { removeContainers, runToEnd } from './container.ts';
import { sharedImage, type SharedImage } from './shared-image.ts';

const sh = promisify(execFile);
const KEYS = 500;
const BUCKET = 'image-backups';

let image: SharedImage;
let certs: Certs;
let etcd: EtcdMember;
let keys: Map<string, string>;
let work: string;
let client: S3Client;
const etcdHarness = new EtcdHarness();
const swift = new SwiftS3();

/** A folder standing for a claim: the fsGroup owns it (setgid), as kubelet leaves a volume with an fsGroup. */
function claim(name: string): string {
  const dir = join(work, name);
  mkdirSync(dir);
  chownSync(dir, 0, BACKUP_USER_ID);
  chmodSync(dir, 0o2775);
  return dir;
}

/** A BackupSchedule v1 of the etcd started here, to `destination`. */
function schedule(name: string, destination: v1.BackupScheduleSpec['destination']): v1.BackupSchedule {
  return {
    apiVersion: 'kubelings.dev/v1',
    kind: 'BackupSchedule',
    metadata: { name, namespace: 'image-test', uid: '5e1f0000-0000-4000-8000-000000000043' },
    spec: { schedule: '0 2 * * *', source: { type: 'Etcd', etcd: { endpoints: [etcd.endpoint], tlsSecretName: 'etcd-client-tls' } }, destination, retention: { keepLast: 3 } },
  } as v1.BackupSchedule;
}

/** The etcd client Secret (ca.crt, tls.crt, tls.key). */
const etcdSecret = (): Record<string, string> => ({ 'ca.crt': readFileSync(certs.ca, 'utf8'), 'tls.crt': readFileSync(certs.clientCert, 'utf8'), 'tls.key': readFileSync(certs.clientKey, 'utf8') });

/** Restores `snapshot` with etcdctl, starts etcd on it and reads every key back. */
async function restoredKeys(snapshot: string): Promise<Map<string, string>> {
  const dataDir = join(mkdtempSync(join(work, 'restored-')), 'data');
  const peerPort = await freePort();
  await sh('etcdctl', ['snapshot', 'restore', snapshot, '--name', 'restored', '--data-dir', dataDir, '--initial-cluster', `restored=http://127.0.0.1:${peerPort}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${peerPort}`], { env: { ...process.env, ETCDCTL_API: '3' } });
  const restored = await etcdHarness.start({ dataDir, name: 'restored', peerPort });
  try {
    return await readKeys(etcdHarness, restored, undefined, 'image/');
  } finally {
    await etcdHarness.kill(restored);
  }
}

beforeAll(async () => {
  requireEtcd();
  requireSwift();
  work = mkdtempSync(join(etcdHarness.root, 'image-'));
  chmodSync(work, 0o755);
  [image, certs] = await Promise.all([sharedImage(), makeCerts(join(work, 'certs')), swift.start()]).then(([i, c]) => [i, c] as const);
  client = swift.client();
  await swift.createBucket(BUCKET);
  etcd = await etcdHarness.start({ certs });
  keys = await writeKeys(etcdHarness, etcd, certs, KEYS, { prefix: 'image/' });
}, 15 * 60_000);

afterAll(async () => {
  client?.destroy();
  await removeContainers();
  await Promise.all([etcdHarness.stopAll(), swift.stop()]);
});

describe('the backup runner in the image', () => {
  it('snapshots etcd over mutual TLS into a claim, and etcdctl restores every key from what it wrote', async () => {
    const destination = claim('etcd-backups');
    const cronJob = buildCronJob(schedule('nightly-etcd', { type: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'etcd-backups', path: 'nightly' } }));
    const pod = cronJob.spec!.jobTemplate.spec!.template.spec!;
    const result = await runToEnd(image, pod, pod.containers[0]!, { claims: { 'etcd-backups': destination }, secrets: { 'etcd-client-tls': etcdSecret() } });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const written = readdirSync(join(destination, 'nightly'));
    const snapshot = written.find((f) => /^nightly-etcd-\d{8}T\d{6}Z\.db$/.test(f));
    expect(snapshot, written.join(', ')).toBeDefined();
    expect(written).toContain(`${snapshot}.sha256`);
    const restored = await restoredKeys(join(destination, 'nightly', snapshot!));
    expect(restored.size).toBe(KEYS);
    expect(restored).toEqual(keys);
  }, 180_000);

  it('snapshots etcd into a Swift bucket with credentials from a Secret, and etcdctl restores every key from the object', async () => {
    const cronJob = buildCronJob(
      schedule('etcd-to-swift', { type: 'ObjectStore', objectStore: { bucket: BUCKET, prefix: 'cluster', endpoint: swift.endpoint, forcePathStyle: true, allowHttp: true, credentialsSecretName: 's3-credentials' } }),
    );
    const pod = cronJob.spec!.jobTemplate.spec!.template.spec!;
    const result = await runToEnd(image, pod, pod.containers[0]!, { secrets: { 'etcd-client-tls': etcdSecret(), 's3-credentials': { ...SWIFT_CREDENTIALS } } });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const listed = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'cluster/' }));
    // To an object store the snapshot goes zstd-compressed; Debian's zstd decompresses it.
    const key = (listed.Contents ?? []).map((o) => o.Key!).find((k) => /etcd-to-swift-\d{8}T\d{6}Z\.db\.zst$/.test(k));
    expect(key, JSON.stringify(listed.Contents?.map((o) => o.Key))).toBeDefined();
    const object = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    const file = join(work, 'from-swift.db.zst');
    writeFileSync(file, await object.Body!.transformToByteArray());
    await sh('zstd', ['-d', '-q', file, '-o', join(work, 'from-swift.db')]);
    expect(await restoredKeys(join(work, 'from-swift.db'))).toEqual(keys);
  }, 180_000);
});

describe('a Restore in the image', () => {
  it('extracts a volume archive from one claim into the target claim', async () => {
    const source = join(work, 'volume');
    mkdirSync(join(source, 'conf'), { recursive: true });
    writeFileSync(join(source, 'conf', 'app.yaml'), 'replicas: 3\n');
    writeFileSync(join(source, 'data.bin'), Buffer.alloc(256 * 1024, 7));
    const backups = claim('backups');
    await runnerArchive(source, backups, 'files-20261201T010000Z.tar.gz');
    const target = claim('files');
    const restore: Restore = {
      apiVersion: 'kubelings.dev/v1',
      kind: 'Restore',
      metadata: { name: 'files', namespace: 'image-test', uid: '5e1f0000-0000-4000-8000-000000000044' },
      spec: { from: { persistentVolumeClaim: { claimName: 'backups' } }, backup: 'files-20261201T010000Z.tar.gz', target: { persistentVolumeClaim: { claimName: 'files' } } },
    } as Restore;
    const pod = buildRestoreJob(restore).spec!.template.spec!;
    const result = await runToEnd(image, pod, pod.containers[0]!, { claims: { backups, files: target } });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(readFileSync(join(target, 'conf', 'app.yaml'), 'utf8')).toBe('replicas: 3\n');
    expect(readFileSync(join(target, 'data.bin')).equals(Buffer.alloc(256 * 1024, 7))).toBe(true);
  }, 120_000);
});

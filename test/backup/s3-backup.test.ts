/**
 * The runner against a real S3 server (Swift + s3api, test/backup/s3-server.ts) and a real etcd, the
 * bundle as its own process. The interoperability proof uses stock tools only after the upload: curl
 * (SigV4) downloads, `sha256sum -c` checks the sidecar, Debian's `age` decrypts, `zstd`/`tar -z`
 * decompress, `etcdctl snapshot restore` restores, and etcd started on it serves every key. Then the
 * runner's own `backup list|verify|fetch`, and retention over the bucket.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CreateMultipartUploadCommand, ListMultipartUploadsCommand, ListObjectsV2Command, PutObjectCommand, UploadPartCommand, type S3Client } from '@aws-sdk/client-s3';
import { EtcdHarness, freePort, readKeys, requireEtcd, writeKeys, type EtcdMember } from './etcd-harness.ts';
import { buildRunnerBundle, killLeftoverRunners, runRunner } from './runner-process.ts';
import { requireSwift, SWIFT_CREDENTIALS, SwiftS3 } from './s3-server.ts';

const sh = promisify(execFile);
const KEY_COUNT = 2000;
const BUCKET = 'backups';

/** The stock tools of the proof (Debian: age, zstd, curl, tar, coreutils). */
export function requireStockTools(): void {
  for (const tool of ['age', 'age-keygen', 'zstd', 'curl', 'tar', 'sha256sum']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) throw new Error(`${tool} not found: the object-store suite proves interoperability with stock tools: \`sudo apt-get install -y age zstd curl tar\``);
  }
}

describe('backup runner to a real S3 server', () => {
  const etcdHarness = new EtcdHarness();
  const swift = new SwiftS3();
  let bundle: string;
  let etcd: EtcdMember;
  let keys: Map<string, string>;
  let work: string;
  let recipient: string;
  let identity: string;
  let client: S3Client;

  const s3Flags = (): string[] => [`--s3-endpoint=${swift.endpoint}`, '--s3-allow-http', '--s3-force-path-style'];
  const env = (schedule: string): Record<string, string> => ({ BACKUP_SCHEDULE_NAME: schedule, BACKUP_SCHEDULE_NAMESPACE: 'test', TMPDIR: work, ...SWIFT_CREDENTIALS });
  async function keysUnder(prefix: string): Promise<string[]> {
    const out = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
    return (out.Contents ?? []).map((o) => o.Key!).sort();
  }
  /** curl with SigV4 (curl 7.88 does not send x-amz-content-sha256 itself; Swift needs it). */
  async function curlDownload(key: string, out: string): Promise<void> {
    const netrc = join(work, 'netrc');
    writeFileSync(netrc, `machine 127.0.0.1 login ${SWIFT_CREDENTIALS.AWS_ACCESS_KEY_ID} password ${SWIFT_CREDENTIALS.AWS_SECRET_ACCESS_KEY}\n`);
    const emptySha = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
    await sh('curl', ['-sSf', '--netrc-file', netrc, '--aws-sigv4', 'aws:amz:us-east-1:s3', '-H', `x-amz-content-sha256: ${emptySha}`, '-o', out, `${swift.endpoint}/${BUCKET}/${key}`]);
  }

  beforeAll(async () => {
    requireEtcd();
    requireSwift();
    requireStockTools();
    work = etcdHarness.root;
    [bundle] = await Promise.all([buildRunnerBundle(), swift.start()]);
    client = swift.client();
    await swift.createBucket(BUCKET);
    etcd = await etcdHarness.start();
    keys = await writeKeys(etcdHarness, etcd, undefined, KEY_COUNT, { prefix: 'drill/' });
    identity = join(work, 'key.txt');
    await sh('age-keygen', ['-o', identity]);
    recipient = (await sh('age-keygen', ['-y', identity])).stdout.trim();
  }, 180_000);

  afterEach(killLeftoverRunners);

  afterAll(async () => {
    client?.destroy();
    await Promise.all([etcdHarness.stopAll(), swift.stop()]);
    if (bundle) rmSync(dirname(bundle), { recursive: true, force: true });
  });

  it('uploads an age-encrypted, zstd-compressed etcd snapshot that curl, age, zstd and etcdctl restore with every key; list, verify and fetch agree', async () => {
    const args = ['backup', '--source=etcd', `--etcd-endpoints=${etcd.endpoint}`, `--destination-url=s3://${BUCKET}/cluster-a`, ...s3Flags(), `--age-recipient=${recipient}`, '--keep-last=3'];
    const result = await runRunner(bundle, args, env('nightly-etcd'));
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const listed = await keysUnder('cluster-a/');
    expect(listed).toHaveLength(2);
    const [key, sidecarKey] = listed as [string, string];
    expect(key).toMatch(/^cluster-a\/nightly-etcd-\d{8}T\d{6}Z\.db\.zst\.age$/);
    expect(sidecarKey).toBe(`${key}.sha256`);
    const name = key.slice('cluster-a/'.length);
    const summary = result.records.at(-1)!;
    expect(summary).toMatchObject({ msg: 'backup complete: uploaded, checked and pruned', exitCode: 0, compression: 'zstd', encrypted: true, totalKeys: expect.any(Number) });
    // No credential in any log line.
    expect(result.stdout + result.stderr).not.toContain(SWIFT_CREDENTIALS.AWS_SECRET_ACCESS_KEY);

    // Stock tools only from here on.
    const dir = join(work, 'restore-etcd');
    mkdirSync(dir);
    await curlDownload(key, join(dir, name));
    await curlDownload(sidecarKey, join(dir, `${name}.sha256`));
    await sh('sha256sum', ['-c', `${name}.sha256`], { cwd: dir });
    await sh('sh', ['-c', `age -d -i "$IDENTITY" "$NAME" | zstd -d -q -o snapshot.db`], { cwd: dir, env: { ...process.env, IDENTITY: identity, NAME: name } });
    const peerPort = await freePort();
    const dataDir = join(dir, 'data');
    await sh('sh', ['-c', `ETCDCTL_API=3 etcdctl snapshot restore snapshot.db --name restored --data-dir "$DATA_DIR" --initial-cluster restored=http://127.0.0.1:${peerPort} --initial-advertise-peer-urls http://127.0.0.1:${peerPort}`], { cwd: dir, env: { ...process.env, DATA_DIR: dataDir } });
    const restored = await etcdHarness.start({ dataDir, name: 'restored', peerPort });
    const back = await readKeys(etcdHarness, restored, undefined, 'drill/');
    expect(back.size).toBe(KEY_COUNT);
    expect(back).toEqual(keys);
    await etcdHarness.kill(restored);

    const url = `s3://${BUCKET}/${key}`;
    const verify = await runRunner(bundle, ['backup', 'verify', url, `--identity=${identity}`, ...s3Flags()], SWIFT_CREDENTIALS);
    expect(verify.code, verify.stderr).toBe(0);
    expect(JSON.parse(verify.stdout)).toMatchObject({ ok: true, sidecar: 'matches', content: 'checked', totalKeys: summary['totalKeys'], revision: summary['revision'] });
    const withoutKey = await runRunner(bundle, ['backup', 'verify', url, ...s3Flags()], SWIFT_CREDENTIALS);
    expect(JSON.parse(withoutKey.stdout)).toMatchObject({ ok: true, sidecar: 'matches', content: 'not checked: encrypted, no --identity' });
    const fetched = join(dir, 'fetched.db');
    const fetch = await runRunner(bundle, ['backup', 'fetch', url, `--identity=${identity}`, '-o', fetched, ...s3Flags()], SWIFT_CREDENTIALS);
    expect(fetch.code, fetch.stderr).toBe(0);
    expect(readFileSync(fetched).equals(readFileSync(join(dir, 'snapshot.db')))).toBe(true);
    const list = await runRunner(bundle, ['backup', 'list', `s3://${BUCKET}/cluster-a`, ...s3Flags()], SWIFT_CREDENTIALS);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`^${name.replaceAll('.', '\\.')}\\s+\\d{4}-\\d{2}-\\d{2}T\\S+\\s+\\d+\\s+age\\s+yes$`, 'm'));

    // A wrong identity: verify fails, fetch leaves nothing.
    const other = join(work, 'other.txt');
    await sh('age-keygen', ['-o', other]);
    const wrong = await runRunner(bundle, ['backup', 'fetch', url, `--identity=${other}`, '-o', join(dir, 'wrong.db'), ...s3Flags()], SWIFT_CREDENTIALS);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/no identity matched/);
    expect(spawnSync('test', ['-e', join(dir, 'wrong.db')]).status).not.toBe(0);
  }, 120_000);

  it('uploads a volume archive (.tar.gz.age) that curl, age and tar extract to the same files', async () => {
    const source = join(work, 'volume');
    mkdirSync(join(source, 'sub/deeper'), { recursive: true });
    const files: Record<string, Buffer> = { 'a.bin': randomBytes(3 << 20), 'sub/b.txt': Buffer.from('hello\n'.repeat(10000)), 'sub/deeper/empty': Buffer.alloc(0) };
    for (const [file, data] of Object.entries(files)) writeFileSync(join(source, file), data);
    symlinkSync('../a.bin', join(source, 'sub/link'));
    const args = ['backup', '--source=pvc', `--source-dir=${source}`, `--destination-url=s3://${BUCKET}/volumes/`, ...s3Flags(), `--age-recipient=${recipient}`, '--compression=gzip', '--keep-last=1'];
    const result = await runRunner(bundle, args, env('data'));
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const [key, sidecarKey] = (await keysUnder('volumes/')) as [string, string];
    expect(key).toMatch(/^volumes\/data-\d{8}T\d{6}Z\.tar\.gz\.age$/);
    expect(sidecarKey).toBe(`${key}.sha256`);
    const dir = join(work, 'restore-volume');
    mkdirSync(join(dir, 'out'), { recursive: true });
    const name = key.slice('volumes/'.length);
    await curlDownload(key, join(dir, name));
    await curlDownload(sidecarKey, join(dir, `${name}.sha256`));
    await sh('sha256sum', ['-c', `${name}.sha256`], { cwd: dir });
    await sh('sh', ['-c', 'age -d -i "$IDENTITY" "$NAME" | tar -xzf - -C out'], { cwd: dir, env: { ...process.env, IDENTITY: identity, NAME: name } });
    for (const [file, data] of Object.entries(files)) expect(readFileSync(join(dir, 'out', file)).equals(data), file).toBe(true);
    expect((await sh('readlink', [join(dir, 'out/sub/link')])).stdout.trim()).toBe('../a.bin');

    const fetched = join(dir, 'fetched.tar');
    const fetch = await runRunner(bundle, ['backup', 'fetch', `s3://${BUCKET}/${key}`, `--identity=${identity}`, '-o', fetched, ...s3Flags()], SWIFT_CREDENTIALS);
    expect(fetch.code, fetch.stderr).toBe(0);
    expect(JSON.parse(fetch.stdout)).toMatchObject({ ok: true, entries: 6 });
    expect((await sh('tar', ['-tf', fetched])).stdout.split('\n').filter(Boolean).sort()).toEqual(['a.bin', 'sub/', 'sub/b.txt', 'sub/deeper/', 'sub/deeper/empty', 'sub/link']);
  }, 120_000);

  it("prunes this schedule's objects only (with their sidecars), ignores unverified ones and aborts only its own stale uploads", async () => {
    const put = (key: string, body = 'x'): Promise<unknown> => client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `ret/${key}`, Body: body }));
    for (const day of ['01', '02', '03']) {
      await put(`keep-202601${day}T000000Z.db.zst`);
      await put(`keep-202601${day}T000000Z.db.zst.sha256`);
    }
    await put('keep-20260104T000000Z.db.zst'); // no sidecar: its run never finished
    await put('keep-x-20260101T000000Z.db');
    await put('keep-x-20260101T000000Z.db.sha256');
    await put('keep-20260101T000000Z.db.zst.note'); // not a backup name
    const stale = await client.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'ret/keep-20260105T000000Z.db.zst' }));
    await client.send(new UploadPartCommand({ Bucket: BUCKET, Key: 'ret/keep-20260105T000000Z.db.zst', UploadId: stale.UploadId, PartNumber: 1, Body: Buffer.alloc(1024) }));
    const foreign = await client.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'ret/keep-x-20260105T000000Z.db' }));

    const args = ['backup', '--source=etcd', `--etcd-endpoints=${etcd.endpoint}`, `--destination-url=s3://${BUCKET}/ret`, ...s3Flags(), '--keep-last=2', '--s3-verify=download'];
    const result = await runRunner(bundle, args, env('keep'));
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const summary = result.records.at(-1)!;
    expect(summary).toMatchObject({ encrypted: false, confirmed: 'size and SHA-256 of a full download', pruned: ['ret/keep-20260101T000000Z.db.zst', 'ret/keep-20260102T000000Z.db.zst'] });
    expect(result.records.some((r) => r['msg'] === 'aborted multipart uploads left by interrupted runs of this schedule')).toBe(true);
    const left = await keysUnder('ret/');
    const fresh = left.find((k) => /^ret\/keep-2\d{7}T\d{6}Z\.db\.zst$/.test(k) && !k.startsWith('ret/keep-202601'))!;
    expect(left).toEqual([
      'ret/keep-20260101T000000Z.db.zst.note',
      'ret/keep-20260103T000000Z.db.zst',
      'ret/keep-20260103T000000Z.db.zst.sha256',
      'ret/keep-20260104T000000Z.db.zst',
      fresh,
      `${fresh}.sha256`,
      'ret/keep-x-20260101T000000Z.db',
      'ret/keep-x-20260101T000000Z.db.sha256',
    ].sort());
    const uploads = await client.send(new ListMultipartUploadsCommand({ Bucket: BUCKET, Prefix: 'ret/' }));
    expect((uploads.Uploads ?? []).map((u) => u.UploadId)).toEqual([foreign.UploadId]);
  }, 120_000);

  it('verify and fetch refuse an object whose bytes differ from its sidecar, and leave no output', async () => {
    const source = join(work, 'small');
    mkdirSync(source);
    writeFileSync(join(source, 'f.txt'), 'data\n'.repeat(1000));
    const result = await runRunner(bundle, ['backup', '--source=pvc', `--source-dir=${source}`, `--destination-url=s3://${BUCKET}/tamper`, ...s3Flags(), '--keep-last=1'], env('small'));
    expect(result.code, result.stdout).toBe(0);
    const key = (await keysUnder('tamper/')).find((k) => k.endsWith('.tar.zst'))!;
    const url = `s3://${BUCKET}/${key}`;
    const good = await runRunner(bundle, ['backup', 'verify', url, ...s3Flags()], SWIFT_CREDENTIALS);
    expect(JSON.parse(good.stdout)).toMatchObject({ ok: true, sidecar: 'matches', content: 'checked', entries: 1 });
    // Another valid zstd stream of a tar under the same name: only the sidecar can tell.
    const other = join(work, 'other.tar.zst');
    await sh('sh', ['-c', `tar -cf - -C "${source}" . | zstd -q -o "${other}"`]);
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: readFileSync(other) }));
    const verify = await runRunner(bundle, ['backup', 'verify', url, ...s3Flags()], SWIFT_CREDENTIALS);
    expect(verify.code).toBe(1);
    expect(JSON.parse(verify.stdout)).toMatchObject({ ok: false, sidecar: 'mismatch' });
    const out = join(work, 'tampered.tar');
    const fetch = await runRunner(bundle, ['backup', 'fetch', url, '-o', out, ...s3Flags()], SWIFT_CREDENTIALS);
    expect(fetch.code).toBe(1);
    expect(fetch.stderr).toMatch(/differs from the sidecar/);
    expect(spawnSync('test', ['-e', out]).status).not.toBe(0);
  }, 60_000);
});

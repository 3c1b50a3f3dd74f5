/**
 * `backup restore` from a real S3 server (OpenStack Swift with s3api), as the runner bundle the image
 * runs: a volume uploaded by the runner (age-encrypted, zstd) is restored with `latest` and the identity
 * into a directory holding the source's files; a newer object whose content no
 * longer matches its sidecar is skipped by `latest` and refused when named (exit 5, nothing left in the
 * target, no staging file); without the identity the encrypted object is refused; an etcd snapshot
 * object that does not verify is refused and its staging file removed.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRunnerBundle, runRunner } from '../runner-process.ts';
import { requireSwift, SWIFT_CREDENTIALS, SwiftS3 } from '../s3-server.ts';
import { snapshotBytes } from '../backup-fixtures.ts';
import { tempDir, removeTempDirsAfterEach } from '../temp-dirs.ts';

removeTempDirsAfterEach();
const sh = promisify(execFile);
const BUCKET = 'restores';

describe('backup restore from an object store', () => {
  const swift = new SwiftS3();
  let bundle: string;
  let client: S3Client;
  let work: string;
  let identity: string;
  let recipient: string;
  const s3Flags = (): string[] => [`--s3-endpoint=${swift.endpoint}`, '--s3-allow-http', '--s3-force-path-style'];
  const env = (schedule: string): Record<string, string> => ({ BACKUP_SCHEDULE_NAME: schedule, BACKUP_SCHEDULE_NAMESPACE: 'test', ...SWIFT_CREDENTIALS });
  const keys = async (prefix: string): Promise<string[]> => ((await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }))).Contents ?? []).map((o) => o.Key!).sort();

  beforeAll(async () => {
    requireSwift();
    [bundle] = await Promise.all([buildRunnerBundle(), swift.start()]);
    client = swift.client();
    await swift.createBucket(BUCKET);
    work = join(dirname(bundle), 'work');
    mkdirSync(work);
    identity = join(work, 'key.txt');
    await sh('age-keygen', ['-o', identity]);
    recipient = (await sh('age-keygen', ['-y', identity])).stdout.trim();
  }, 180_000);

  afterAll(async () => {
    client?.destroy();
    await swift.stop();
    if (bundle) rmSync(dirname(bundle), { recursive: true, force: true });
  });

  it('restores the latest encrypted volume backup, skipping a tampered newer one', async () => {
    const source = tempDir('bks-s3-restore-src-');
    mkdirSync(join(source, 'sub'));
    writeFileSync(join(source, 'a.txt'), 'alpha');
    writeFileSync(join(source, 'sub/b.bin'), Buffer.alloc(200_000, 3));
    symlinkSync('../a.txt', join(source, 'sub/link'));
    const upload = await runRunner(bundle, ['backup', '--source=pvc', `--source-dir=${source}`, `--destination-url=s3://${BUCKET}/vol`, ...s3Flags(), `--age-recipient=${recipient}`, '--keep-last=5'], env('files'));
    expect(upload.code, upload.stdout + upload.stderr).toBe(0);
    const [key] = await keys('vol/files-');
    // A newer object of the same schedule whose bytes are not what its sidecar records.
    const newer = key!.replace(/\d{8}T\d{6}Z/, '20991231T000000Z');
    const original = Buffer.from(await (await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key! }))).Body!.transformToByteArray());
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: newer, Body: Buffer.concat([original, Buffer.from('x')]) }));
    const sidecar = await (await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: `${key!}.sha256` }))).Body!.transformToString();
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${newer}.sha256`, Body: sidecar.replace(key!.slice(4), newer.slice(4)) }));

    const target = tempDir('bks-s3-restore-target-');
    const restore = await runRunner(bundle, ['backup', 'restore', `--from=s3://${BUCKET}/vol`, ...s3Flags(), '--backup=latest', '--schedule=files', `--identity=${identity}`, `--target-dir=${target}`], { ...SWIFT_CREDENTIALS });
    expect(restore.code, restore.stdout + restore.stderr).toBe(0);
    expect(restore.stdout).toContain('skipped, trying an older backup');
    expect(readFileSync(join(target, 'a.txt'), 'utf8')).toBe('alpha');
    expect(readFileSync(join(target, 'sub/b.bin')).equals(Buffer.alloc(200_000, 3))).toBe(true);
    expect(readdirSync(target).sort()).toEqual(['a.txt', 'sub']);

    // Named, the tampered one is refused before anything is written.
    const refusedTarget = tempDir('bks-s3-restore-refused-');
    const named = await runRunner(bundle, ['backup', 'restore', `--from=s3://${BUCKET}/vol`, ...s3Flags(), `--backup=${newer.slice(4)}`, `--identity=${identity}`, `--target-dir=${refusedTarget}`], { ...SWIFT_CREDENTIALS });
    expect(named.code).toBe(5);
    // An appended byte: age authentication fails before the SHA-256 is compared.
    expect(named.stdout).toMatch(/failed authentication: the file is damaged/);
    expect(readdirSync(refusedTarget)).toEqual([]);
    // Without the identity the encrypted backup cannot be read: refused too.
    const noKey = await runRunner(bundle, ['backup', 'restore', `--from=s3://${BUCKET}/vol`, ...s3Flags(), `--backup=${key!.slice(4)}`, `--target-dir=${refusedTarget}`], { ...SWIFT_CREDENTIALS });
    expect(noKey.code).toBe(5);
    expect(noKey.stdout).toMatch(/age-encrypted: pass --identity/);
    expect(readdirSync(refusedTarget)).toEqual([]);
  }, 120_000);

  it('refuses an etcd snapshot object whose structure does not verify, leaving no staging file behind', async () => {
    const bytes = snapshotBytes();
    const { createHash } = await import('node:crypto');
    const name = 'etcd-20261201T010000Z.db';
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `etcd/${name}`, Body: bytes }));
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `etcd/${name}.sha256`, Body: `${createHash('sha256').update(bytes).digest('hex')}  ${name}\n` }));
    const target = tempDir('bks-s3-restore-etcd-');
    const restore = await runRunner(bundle, ['backup', 'restore', `--from=s3://${BUCKET}/etcd`, ...s3Flags(), `--backup=${name}`, `--target-dir=${target}`], { ...SWIFT_CREDENTIALS });
    // The fixture has valid meta pages but no real bucket pages: the snapshot check fetchObject runs refuses it.
    expect(restore.code, restore.stdout).toBe(5);
    expect(restore.stdout).toMatch(/not a valid etcd snapshot/);
    expect(readdirSync(target)).toEqual([]);
  }, 60_000);
});

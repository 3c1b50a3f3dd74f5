/**
 * A volume archive whose files changed while read, to a real S3 server (Swift + s3api): kept as
 * `<schedule>-<stamp>.incomplete.tar.zst.age` with its sidecar (exit 3), the original key gone, only the
 * newest incomplete object kept, never counted by retention; what is kept decrypts and extracts with
 * the stock tools. The runner runs in process (its onBytesCopied hook tears a file mid-read).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetObjectCommand, HeadObjectCommand, ListMultipartUploadsCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { createHash, randomBytes } from 'node:crypto';
import { keepIncomplete } from '../../src/backup/object-store/s3-incomplete.ts';
import { parseBackupArgs, type BackupCommand } from '../../src/backup/backup-args.ts';
import { EXIT_INCOMPLETE, EXIT_OK } from '../../src/backup/run-backup.ts';
import { runObjectStoreBackup } from '../../src/backup/object-store/s3-run.ts';
import { FakeClock } from '../../src/runtime/clock.ts';
import { requireSwift, SWIFT_CREDENTIALS, SwiftS3 } from './s3-server.ts';

const sh = promisify(execFile);
const BUCKET = 'torn';
const logger = pino({ level: process.env.TEST_LOG ?? 'silent' });

describe('a torn volume archive to a real S3 server', () => {
  const swift = new SwiftS3();
  const work = mkdtempSync(join(tmpdir(), 'bks-s3-torn-'));
  let client: S3Client;
  let identity: string;
  let recipient: string;

  beforeAll(async () => {
    requireSwift();
    await swift.start();
    client = swift.client();
    await swift.createBucket(BUCKET);
    identity = join(work, 'key.txt');
    await sh('age-keygen', ['-o', identity]);
    recipient = (await sh('age-keygen', ['-y', identity])).stdout.trim();
  }, 180_000);
  afterAll(async () => {
    client?.destroy();
    await swift.stop();
    rmSync(work, { recursive: true, force: true });
  });

  async function keys(): Promise<string[]> {
    const out = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'vol/' }));
    return (out.Contents ?? []).map((o) => o.Key!).sort();
  }

  it('keeps the newest torn archive as .incomplete.tar.zst.age (exit 3), never counts it, and it extracts', async () => {
    const source = join(work, 'volume');
    mkdirSync(source);
    writeFileSync(join(source, 'table.db'), Buffer.alloc(2_000_000, 3));
    writeFileSync(join(source, 'note.txt'), 'steady\n');
    const args = ['--source=pvc', `--source-dir=${source}`, `--destination-url=s3://${BUCKET}/vol`, `--s3-endpoint=${swift.endpoint}`, '--s3-allow-http', '--s3-force-path-style', `--age-recipient=${recipient}`, '--keep-last=1'];
    const command = parseBackupArgs(args, { BACKUP_SCHEDULE_NAME: 'pg' }) as Extract<BackupCommand, { kind: 'upload' }>;
    const env = { ...SWIFT_CREDENTIALS };
    // A writer that shrinks and regrows the file while the runner reads it.
    const tear = (): ((n: number) => void) => {
      let cut = false;
      return () => {
        if (!cut) truncateSync(join(source, 'table.db'), 10);
        cut = true;
        writeFileSync(join(source, 'table.db'), Buffer.alloc(2_000_000, 3));
      };
    };
    expect(await runObjectStoreBackup(command, { logger, clock: new FakeClock(Date.UTC(2026, 11, 1, 1, 0, 0)) }, env)).toBe(EXIT_OK);
    for (const hour of [2, 3]) {
      expect(await runObjectStoreBackup(command, { logger, clock: new FakeClock(Date.UTC(2026, 11, 1, hour, 0, 0)), onBytesCopied: tear() }, env)).toBe(EXIT_INCOMPLETE);
    }
    // The complete backup of 01:00 stays (a torn archive is not a backup); only the newest torn one is kept.
    expect(await keys()).toEqual([
      'vol/pg-20261201T010000Z.tar.zst.age',
      'vol/pg-20261201T010000Z.tar.zst.age.sha256',
      'vol/pg-20261201T030000Z.incomplete.tar.zst.age',
      'vol/pg-20261201T030000Z.incomplete.tar.zst.age.sha256',
    ]);
    const name = 'pg-20261201T030000Z.incomplete.tar.zst.age';
    const dir = join(work, 'restore');
    mkdirSync(join(dir, 'out'), { recursive: true });
    for (const file of [name, `${name}.sha256`]) {
      const { Body } = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: `vol/${file}` }));
      writeFileSync(join(dir, file), await Body!.transformToByteArray());
    }
    await sh('sha256sum', ['-c', `${name}.sha256`], { cwd: dir });
    await sh('sh', ['-c', `age -d -i ${identity} ${name} | zstd -d | tar -x -C out`], { cwd: dir });
    // keep-last=1 with a complete run: the torn archive was not counted, so the older complete one goes.
    expect(await runObjectStoreBackup(command, { logger, clock: new FakeClock(Date.UTC(2026, 11, 1, 4, 0, 0)) }, env)).toBe(EXIT_OK);
    expect(await keys()).toEqual([
      'vol/pg-20261201T030000Z.incomplete.tar.zst.age',
      'vol/pg-20261201T030000Z.incomplete.tar.zst.age.sha256',
      'vol/pg-20261201T040000Z.tar.zst.age',
      'vol/pg-20261201T040000Z.tar.zst.age.sha256',
    ]);
  }, 240_000);

  it('copies an archive above the single-copy limit in UploadPartCopy parts (limits scaled down), checked by a full download', async () => {
    const body = randomBytes(12 << 20);
    const sha256 = createHash('sha256').update(body).digest('hex');
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'big/pg-20261201T050000Z.tar.zst', Body: body }));
    const events: string[] = [];
    const kept = await keepIncomplete({
      client,
      location: { bucket: BUCKET, prefix: 'big' },
      schedule: 'pg',
      from: 'big/pg-20261201T050000Z.tar.zst',
      name: 'pg-20261201T050000Z.incomplete.tar.zst',
      sent: { size: body.length, sha256, parts: 1, expectedEtag: '"unused"' },
      verify: 'download',
      onCopied: (k) => events.push(`copied ${k}`),
      onKept: (k) => events.push(`kept ${k}`),
      copyLimits: { singleCopyMax: 1 << 20, minPartBytes: 5 << 20 },
    });
    expect(kept).toBe('big/pg-20261201T050000Z.incomplete.tar.zst');
    expect(events).toEqual([`copied ${kept}`, `kept ${kept}`]);
    const listed = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'big/' }));
    expect((listed.Contents ?? []).map((o) => [o.Key, o.Size])).toEqual([[kept, body.length], [`${kept}.sha256`, expect.any(Number)]]);
    const { Body } = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: kept }));
    expect(Buffer.from(await Body!.transformToByteArray()).equals(body)).toBe(true);
    // Three 5 MiB-or-less parts: the ETag of a multipart object (a single CopyObject gives a plain MD5).
    expect((await client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: kept }))).ETag).toMatch(/-3"$/);
    expect((await client.send(new ListMultipartUploadsCommand({ Bucket: BUCKET }))).Uploads ?? []).toEqual([]);
  }, 120_000);
});

/**
 * A volume archive whose files changed while read, in a bucket: kept as
 * `<schedule>-<stamp>.incomplete.tar[.zst|.gz][.age]`, like the directory destination's
 * `.incomplete.tar.gz`: never counted by retention, only the schedule's newest one kept.
 *
 * An object's key is fixed when its multipart upload starts, and whether the archive is torn is known
 * only at its end, so the upload completes under the run's ordinary key first (confirmed as every
 * backup is) and is then copied server-side (CopyObject; above its 5 GiB limit, UploadPartCopy parts)
 * to the incomplete name; the copy's size is checked (and, with `--s3-verify=download`, its SHA-256),
 * its sidecar written, and only then the original deleted. No `x-amz-copy-source-if-match`: Swift's
 * s3api answers 412 to the multipart ETag it itself reports for the object; the source key is this
 * run's own (checked free before the upload). A run killed in between leaves the original without a
 * sidecar: the state a run killed between completion and sidecar always left, which retention reports
 * and never counts. Copying only torn archives keeps a complete run at one upload and no copy.
 */
import { AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CopyObjectCommand, CreateMultipartUploadCommand, DeleteObjectCommand, UploadPartCopyCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { BackupFailedError } from '../backup-errors.ts';
import { formatSidecar } from '../sidecar.ts';
import { OBJECT_SIDECAR_SUFFIX } from './object-names.ts';
import { deleteKeys, listBackupObjects } from './s3-bucket.ts';
import type { S3Location } from './s3-location.ts';
import { keyOf } from './s3-location.ts';
import type { SentObject } from './s3-multipart.ts';

/** S3's limits on server-side copies: one CopyObject copies at most 5 GiB; a multipart copy at most 10,000 parts. */
export interface CopyLimits {
  /** Largest object copied with one CopyObject. @default 5 GiB */
  readonly singleCopyMax: number;
  /** Smallest part of a multipart copy (grown to fit 10,000 parts). @default 512 MiB */
  readonly minPartBytes: number;
}

const DEFAULT_COPY_LIMITS: CopyLimits = { singleCopyMax: 5 * 1024 ** 3, minPartBytes: 512 * 1024 ** 2 };
const MAX_PARTS = 10_000;

/** Copies `source` (`bucket/escaped-key`) of `size` bytes to `to` server-side; multipart (UploadPartCopy) above `singleCopyMax`. */
async function copyServerSide(client: S3Client, bucket: string, source: string, to: string, size: number, limits: CopyLimits, opts: { abortSignal?: AbortSignal }): Promise<void> {
  if (size <= limits.singleCopyMax) {
    await client.send(new CopyObjectCommand({ Bucket: bucket, Key: to, CopySource: source, MetadataDirective: 'COPY' }), opts);
    return;
  }
  const partBytes = Math.max(limits.minPartBytes, Math.ceil(size / MAX_PARTS));
  const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: to }), opts);
  try {
    const parts: { PartNumber: number; ETag: string | undefined }[] = [];
    for (let start = 0; start < size; start += partBytes) {
      const PartNumber = parts.length + 1;
      const end = Math.min(size, start + partBytes) - 1;
      const answer = await client.send(new UploadPartCopyCommand({ Bucket: bucket, Key: to, UploadId, PartNumber, CopySource: source, CopySourceRange: `bytes=${start}-${end}` }), opts);
      parts.push({ PartNumber, ETag: answer.CopyPartResult?.ETag });
    }
    await client.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: to, UploadId, MultipartUpload: { Parts: parts } }), opts);
  } catch (err) {
    // Bounded: the run's own error matters more; the next run aborts what is left (abortStaleUploads).
    await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: to, UploadId }), { abortSignal: AbortSignal.timeout(20_000) }).catch(() => undefined);
    throw err;
  }
}

/** What {@link keepIncomplete} needs: the completed and confirmed object, and where it goes. */
export interface IncompleteMove {
  readonly client: S3Client;
  readonly location: S3Location;
  readonly schedule: string;
  /** The completed object's key (the run's ordinary name). */
  readonly from: string;
  /** The incomplete name (without prefix). */
  readonly name: string;
  readonly sent: SentObject;
  readonly verify: 'etag' | 'download';
  readonly signal?: AbortSignal;
  /** Hears the copy's key once it exists, so a later failure deletes it too. */
  readonly onCopied: (key: string) => void;
  /** Hears that the copy is confirmed with its sidecar: a kept backup from then on. */
  readonly onKept: (key: string) => void;
  /** @default S3's (5 GiB single copy, 512 MiB parts) */
  readonly copyLimits?: CopyLimits;
}

/** Copies, confirms, writes the copy's sidecar, then deletes the original; resolves with the copy's key. */
export async function keepIncomplete(move: IncompleteMove): Promise<string> {
  const { client, location, sent } = move;
  const opts = move.signal ? { abortSignal: move.signal } : {};
  const to = keyOf(location, move.name);
  const source = `${location.bucket}/${move.from.split('/').map(encodeURIComponent).join('/')}`;
  // Reported before the copy starts: a copy that fails half-way may still have created the key.
  move.onCopied(to);
  await copyServerSide(client, location.bucket, source, to, sent.size, move.copyLimits ?? DEFAULT_COPY_LIMITS, opts);
  const head = await client.send(new HeadObjectCommand({ Bucket: location.bucket, Key: to }), opts);
  if (head.ContentLength !== sent.size) throw new BackupFailedError(`the copy ${to} holds ${head.ContentLength} bytes, ${sent.size} were sent`);
  if (move.verify === 'download') {
    const { Body } = await client.send(new GetObjectCommand({ Bucket: location.bucket, Key: to }), opts);
    const hash = createHash('sha256');
    for await (const chunk of Body as AsyncIterable<Uint8Array>) hash.update(chunk);
    const got = hash.digest('hex');
    if (got !== sent.sha256) throw new BackupFailedError(`the copy ${to} read back has SHA-256 ${got}, the bytes sent ${sent.sha256}`);
  }
  await client.send(new PutObjectCommand({ Bucket: location.bucket, Key: to + OBJECT_SIDECAR_SUFFIX, Body: formatSidecar(sent.sha256, move.name), ContentType: 'text/plain' }), opts);
  move.onKept(to);
  await client.send(new DeleteObjectCommand({ Bucket: location.bucket, Key: move.from }), opts);
  return to;
}

/**
 * Deletes `schedule`'s incomplete objects but `kept` (each with its sidecar): only the newest stays, so a
 * volume that is always busy (every run torn) does not fill the bucket. Resolves with the keys deleted.
 */
export async function pruneOlderIncomplete(client: S3Client, location: S3Location, schedule: string, kept: string, signal?: AbortSignal): Promise<string[]> {
  const older = (await listBackupObjects(client, location, schedule, signal)).filter((o) => o.incomplete && o.key !== kept);
  await deleteKeys(client, location.bucket, older.flatMap((o) => (o.sidecar ? [o.key, o.key + OBJECT_SIDECAR_SUFFIX] : [o.key])), signal);
  return older.map((o) => o.key);
}

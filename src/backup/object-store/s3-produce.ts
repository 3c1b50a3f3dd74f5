/**
 * The two sources streamed into a multipart upload, each checked before the upload may complete:
 *
 * - etcd: the snapshot streams into a scratch file (TMPDIR) and, from that file as it grows, into the
 *   upload. Once etcd ends the stream, the file is checked as today (etcd's SHA-256 trailer, bbolt meta
 *   pages, a walk of every bucket); only then does the caller complete the upload. Parts of a snapshot
 *   that fails the check never become an object: the upload is aborted. Upload and snapshot overlap, so
 *   a run takes about as long as the slower of the two, not their sum.
 * - pvc: the tar stream is parsed as it goes (header checksums, lengths, end of archive) on its way to
 *   the upload; a file that cannot be read fails the run, files changed while read make it incomplete.
 */
import { Readable } from 'node:stream';
import type { Logger } from '../../runtime/logger.ts';
import type { BackupSource } from '../backup-args.ts';
import { BackupFailedError, describeIoError } from '../backup-errors.ts';
import { SnapshotInvalidError } from '../snapshot-verify.ts';
import { archiveDirectory } from '../volume-archive.ts';
import type { MultipartUpload, SentObject } from './s3-multipart.ts';
import { tarChecker } from '../pipeline/tar-check.ts';
import { sendThrough, type PipelineSettings } from '../pipeline/encode-pipeline.ts';
import { assertAllReadable, assertSameMetadata, byteCounter, checkSourceDirectory, fromFirstEndpoint, incompleteReason, readSourceTls, untilAborted, type SnapshotPipelineDeps } from '../producer-common.ts';
import { createScratch, snapshotThroughPipeline } from '../snapshot-pipeline.ts';

/** What a producer needs from the run. */
export interface UploadProducerDeps extends SnapshotPipelineDeps {
  readonly schedule: string;
  readonly settings: PipelineSettings;
  /** Starts a fresh multipart upload of the run's key. */
  readonly startUpload: () => Promise<MultipartUpload>;
}

/** A checked backup whose parts are all uploaded; the caller completes or aborts `upload`. */
export interface UploadedBackup {
  readonly upload: MultipartUpload;
  readonly sent: SentObject;
  /** Bytes of the backup before compression and encryption. */
  readonly plainSize: number;
  readonly details: Readonly<Record<string, unknown>>;
  readonly incomplete?: string;
}

/** Aborts `upload`, logging (not throwing) when the server refuses: the run's own error matters more. */
export async function abortQuietly(upload: MultipartUpload, logger: Logger, why: string): Promise<void> {
  try {
    await upload.abort();
    logger.info({ uploadId: upload.uploadId }, `multipart upload aborted: ${why}`);
  } catch (err) {
    logger.warn({ uploadId: upload.uploadId, err: (err as Error).message }, 'could not abort the multipart upload; the next run aborts it');
  }
}

/** Streams a snapshot from the first endpoint that delivers a valid one into a fresh upload. */
export async function uploadSnapshot(source: Extract<BackupSource, { kind: 'etcd' }>, deps: UploadProducerDeps): Promise<UploadedBackup> {
  const tls = await readSourceTls(source);
  return fromFirstEndpoint(source.endpoints, deps, async (endpoint) => {
    const scratch = await createScratch(deps.schedule);
    let upload: MultipartUpload | undefined;
    try {
      upload = await deps.startUpload();
      deps.progress.reset();
      deps.logger.info({ endpoint }, 'etcd snapshot: streaming to the bucket');
      // A failed upload is the run's error (no next endpoint).
      const report = await snapshotThroughPipeline(endpoint, tls, scratch, deps.settings, upload, deps);
      deps.logger.info({ endpoint, size: report.size, revision: report.revision, totalKeys: report.totalKeys }, 'etcd snapshot: verified (SHA-256 trailer and bbolt structure)');
      const sent = await upload.finish();
      return { upload, sent, plainSize: report.size, details: { source: 'etcd', endpoint, revision: report.revision, totalKeys: report.totalKeys, snapshotSha256: report.sha256 } };
    } catch (err) {
      if (upload) await abortQuietly(upload, deps.logger, err instanceof SnapshotInvalidError ? 'the snapshot failed its check' : 'the run failed');
      throw err;
    } finally {
      await scratch.discard();
    }
  });
}

/** Archives the source directory (tar) into a fresh upload. */
export async function uploadArchive(source: Extract<BackupSource, { kind: 'pvc' }>, deps: UploadProducerDeps): Promise<UploadedBackup> {
  await checkSourceDirectory(source.sourceDir);
  const upload = await deps.startUpload();
  // Plain tar: the tar check reads it as it is, and the pipeline applies the compression the run chose.
  const archive = archiveDirectory({ sourceDir: source.sourceDir, logger: deps.logger, onBytes: byteCounter(deps), output: 'tar' });
  const check = tarChecker();
  try {
    try {
      await sendThrough(Readable.from(untilAborted(archive.stream, deps.signal), { objectMode: false }), [check.stream], deps.settings, upload, deps.onBytesCopied);
    } catch (err) {
      await archive.result.catch(() => undefined);
      // File-system errors are the volume's; anything else (an S3 answer, the network) the caller words.
      throw (err as NodeJS.ErrnoException).syscall !== undefined ? new BackupFailedError(describeIoError('volume archive', err), { cause: err }) : err;
    }
    const result = await archive.result;
    assertAllReadable(result);
    const { entries, metadataSha256 } = await check.report();
    assertSameMetadata(metadataSha256, result);
    const sent = await upload.finish();
    const details = { source: 'pvc', entries, files: result.files, directories: result.directories, symlinks: result.symlinks, contentBytes: result.bytes, vanished: result.vanished.length, changed: result.changed.length, skipped: result.skipped.length };
    const incomplete = incompleteReason(result);
    return { upload, sent, plainSize: check.bytes(), details, ...(incomplete ? { incomplete } : {}) };
  } catch (err) {
    await abortQuietly(upload, deps.logger, 'the run failed');
    throw err;
  }
}

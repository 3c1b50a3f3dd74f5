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
import { stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { Readable } from 'node:stream';
import type { Clock } from '../../runtime/clock.ts';
import type { Logger } from '../../runtime/logger.ts';
import type { BackupSource } from '../backup-args.ts';
import { BackupFailedError, describeIoError } from '../backup-errors.ts';
import { tempFilePrefix } from '../backup-names.ts';
import { TempFile } from '../durable-file.ts';
import { EndpointError, readEtcdTls, streamSnapshot, type EtcdTls } from '../etcd-snapshot.ts';
import type { Progress } from '../progress.ts';
import { SnapshotInvalidError, verifySnapshot } from '../snapshot-verify.ts';
import { archiveDirectory, UNREADABLE_LIMIT } from '../volume-archive.ts';
import { FileFollower } from '../pipeline/file-follower.ts';
import type { MultipartUpload, SentObject } from './s3-multipart.ts';
import { tarChecker } from '../pipeline/tar-check.ts';
import { sendThrough, type PipelineSettings } from '../pipeline/encode-pipeline.ts';

/** What a producer needs from the run. */
export interface UploadProducerDeps {
  readonly logger: Logger;
  readonly clock: Clock;
  readonly progress: Progress;
  readonly schedule: string;
  readonly settings: PipelineSettings;
  /** Starts a fresh multipart upload of the run's key. */
  readonly startUpload: () => Promise<MultipartUpload>;
  readonly signal?: AbortSignal;
  readonly onBytesCopied?: (bytes: number) => void;
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

function counter(deps: UploadProducerDeps): (n: number) => void {
  const hook = deps.onBytesCopied;
  return hook ? (n) => (deps.progress.add(n), hook(n)) : (n) => deps.progress.add(n);
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
  let tls: EtcdTls | undefined;
  if (source.tlsDir !== undefined) {
    try {
      tls = await readEtcdTls(source.tlsDir);
    } catch (err) {
      throw new BackupFailedError((err as Error).message, { cause: err });
    }
  }
  const failures: string[] = [];
  const count = counter(deps);
  for (const endpoint of source.endpoints) {
    if (deps.signal?.aborted) break;
    let temp: TempFile;
    try {
      temp = await TempFile.create(tmpdir(), tempFilePrefix(deps.schedule));
    } catch (err) {
      throw new BackupFailedError(describeIoError(`cannot create a scratch file in ${tmpdir()} (TMPDIR)`, err), { cause: err });
    }
    let upload: MultipartUpload | undefined;
    try {
      upload = await deps.startUpload();
      deps.progress.reset();
      deps.logger.info({ endpoint }, 'etcd snapshot: streaming to the bucket');
      const follower = new FileFollower(temp.path);
      // A failed upload stops the snapshot stream at once, and is the run's error (no next endpoint).
      const stop = new AbortController();
      let uploadFailure: unknown;
      const sending = sendThrough(follower.stream(), [], deps.settings, upload, deps.onBytesCopied);
      sending.catch((err: unknown) => {
        uploadFailure ??= err;
        stop.abort(err);
      });
      const signal = deps.signal ? AbortSignal.any([deps.signal, stop.signal]) : stop.signal;
      let streamed;
      try {
        streamed = await streamSnapshot({ endpoint, tls, file: temp.handle, clock: deps.clock, onBytes: (n) => (follower.wrote(n), count(n)), onTotal: (t) => deps.progress.setTotal(t), signal });
      } catch (err) {
        follower.fail(err as Error);
        await sending.catch(() => undefined);
        throw uploadFailure !== undefined && !deps.signal?.aborted ? uploadFailure : err;
      }
      follower.end(streamed.bytes);
      await temp.sync();
      // The check runs while the tail of the file is still being uploaded.
      const [report] = await Promise.all([verifySnapshot(temp.path, streamed.digest), sending]);
      deps.logger.info({ endpoint, size: report.size, revision: report.revision, totalKeys: report.totalKeys }, 'etcd snapshot: verified (SHA-256 trailer and bbolt structure)');
      const sent = await upload.finish();
      return { upload, sent, plainSize: report.size, details: { source: 'etcd', endpoint, revision: report.revision, totalKeys: report.totalKeys, snapshotSha256: report.sha256 } };
    } catch (err) {
      if (upload) await abortQuietly(upload, deps.logger, err instanceof SnapshotInvalidError ? 'the snapshot failed its check' : 'the run failed');
      if (!(err instanceof EndpointError || err instanceof SnapshotInvalidError)) throw err;
      failures.push(err instanceof EndpointError ? err.message : `${endpoint}: ${err.message}`);
      if (deps.signal?.aborted) break;
      deps.logger.warn({ endpoint, reason: err.message }, 'etcd snapshot: endpoint failed; trying the next one');
    } finally {
      await temp.discard();
    }
  }
  throw new BackupFailedError(`etcd snapshot: no endpoint delivered a valid snapshot (${failures.join('; ') || 'aborted'})`);
}

/** Archives the source directory (tar) into a fresh upload. */
export async function uploadArchive(source: Extract<BackupSource, { kind: 'pvc' }>, deps: UploadProducerDeps): Promise<UploadedBackup> {
  try {
    if (!(await stat(source.sourceDir)).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR', path: source.sourceDir });
  } catch (err) {
    throw new BackupFailedError(describeIoError(`source directory ${source.sourceDir}`, err), { cause: err });
  }
  const upload = await deps.startUpload();
  // Plain tar: the tar check reads it as it is, and the pipeline applies the compression the run chose.
  const archive = archiveDirectory({ sourceDir: source.sourceDir, logger: deps.logger, onBytes: counter(deps), output: 'tar' });
  const check = tarChecker();
  try {
    const signal = deps.signal;
    async function* untilAborted(): AsyncGenerator<Buffer> {
      for await (const chunk of archive.stream) {
        if (signal?.aborted) throw new BackupFailedError('volume archive: aborted (the Pod is being stopped)');
        yield chunk;
      }
    }
    try {
      await sendThrough(Readable.from(untilAborted(), { objectMode: false }), [check.stream], deps.settings, upload, deps.onBytesCopied);
    } catch (err) {
      await archive.result.catch(() => undefined);
      // File-system errors are the volume's; anything else (an S3 answer, the network) the caller words.
      throw (err as NodeJS.ErrnoException).syscall !== undefined ? new BackupFailedError(describeIoError('volume archive', err), { cause: err }) : err;
    }
    const result = await archive.result;
    if (result.unreadable.length > 0) {
      throw new BackupFailedError(
        `volume archive: cannot read ${result.unreadable.length >= UNREADABLE_LIMIT ? `at least ${UNREADABLE_LIMIT}` : result.unreadable.length} path(s) as uid ${process.getuid?.() ?? '?'}: ${result.unreadable.join(', ')}. ` +
          "Hint: the files belong to another user; set spec.podSecurityContext (runAsUser/runAsGroup/fsGroup/supplementalGroups) to the data owner's IDs.",
      );
    }
    const { entries, metadataSha256 } = await check.report();
    // The headers must decode to exactly the metadata read from the volume (tar-header.ts metadataLine).
    if (metadataSha256 !== result.metadataSha256) throw new BackupFailedError('volume archive: its headers decode to other metadata (names, modes, owners, mtimes, sizes, links or sparse maps) than was read from the volume');
    const sent = await upload.finish();
    const details = { source: 'pvc', entries, files: result.files, directories: result.directories, symlinks: result.symlinks, contentBytes: result.bytes, vanished: result.vanished.length, changed: result.changed.length, skipped: result.skipped.length };
    const incomplete = result.changed.length > 0 ? `${result.changed.length} file(s) changed while read (${result.changed.slice(0, 10).join(', ')})` : undefined;
    return { upload, sent, plainSize: check.bytes(), details, ...(incomplete ? { incomplete } : {}) };
  } catch (err) {
    await abortQuietly(upload, deps.logger, 'the run failed');
    throw err;
  }
}

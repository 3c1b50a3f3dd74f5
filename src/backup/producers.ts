/**
 * The two sources of a run, each producing a verified temp file: an etcd snapshot (endpoints tried in
 * order, each failure logged with its reason) or a volume archive. The caller commits or discards it.
 */
import { verifyArchive } from './archive-verify.ts';
import type { BackupSource } from './backup-args.ts';
import type { TempFile } from './durable-file.ts';
import { EndpointError, streamSnapshot, type StreamedSnapshot } from './etcd-snapshot.ts';
import { writeAll } from './file-sink.ts';
import { BackupFailedError, describeIoError } from './backup-errors.ts';
import { SnapshotInvalidError, verifySnapshot } from './snapshot-verify.ts';
import { archiveDirectory } from './volume-archive.ts';
import { assertAllReadable, byteCounter, checkSourceDirectory, fromFirstEndpoint, incompleteReason, readSourceTls, untilAborted, type SnapshotPipelineDeps } from './producer-common.ts';

/** A written, fsynced and verified temp file. */
export interface Produced {
  readonly temp: TempFile;
  readonly size: number;
  readonly sha256: string;
  /** Figures for the summary line (revision and key count, or archive counts). */
  readonly details: Readonly<Record<string, unknown>>;
  /** Why the backup is incomplete (files changed while read), if it is. */
  readonly incomplete?: string;
}

/** What the producers need from the run. */
export interface ProducerDependencies extends SnapshotPipelineDeps {
  /** Creates a fresh temp file in the destination (already worded errors). */
  readonly newTemp: () => Promise<TempFile>;
}

/** Writes, fsyncs and verifies; discards the temp file on any failure. */
async function produceInto<T>(temp: TempFile, fill: () => Promise<void>, verify: () => Promise<T>): Promise<T> {
  try {
    await fill();
    await temp.sync();
    return await verify();
  } catch (err) {
    await temp.discard();
    throw err;
  }
}

/** Streams a snapshot from the first endpoint that delivers a valid one. */
export async function produceSnapshot(source: Extract<BackupSource, { kind: 'etcd' }>, deps: ProducerDependencies): Promise<Produced> {
  const tls = await readSourceTls(source);
  return fromFirstEndpoint(source.endpoints, deps, async (endpoint) => {
    const temp = await deps.newTemp();
    // SIGTERM may have come while the temp file was created: streamSnapshot sees it too, but stop here.
    if (deps.signal?.aborted) {
      await temp.discard();
      return undefined;
    }
    deps.progress.reset();
    deps.logger.info({ endpoint }, 'etcd snapshot: streaming');
    try {
      let streamed: StreamedSnapshot | undefined;
      const report = await produceInto(
        temp,
        async () => {
          streamed = await streamSnapshot({ endpoint, tls, file: temp.handle, clock: deps.clock, onBytes: byteCounter(deps), onTotal: (t) => deps.progress.setTotal(t), ...(deps.signal ? { signal: deps.signal } : {}) });
        },
        () => verifySnapshot(temp.path, streamed?.digest),
      );
      deps.logger.info({ endpoint, size: report.size, revision: report.revision, totalKeys: report.totalKeys }, 'etcd snapshot: verified (SHA-256 trailer and bbolt structure)');
      return { temp, size: report.size, sha256: report.sha256, details: { source: 'etcd', endpoint, revision: report.revision, totalKeys: report.totalKeys } };
    } catch (err) {
      if (err instanceof EndpointError || err instanceof SnapshotInvalidError) throw err;
      throw new BackupFailedError(describeIoError('etcd snapshot: cannot write it', err), { cause: err });
    }
  });
}

/** Archives the source directory; fails listing the first unreadable paths. */
export async function produceArchive(source: Extract<BackupSource, { kind: 'pvc' }>, deps: ProducerDependencies): Promise<Produced> {
  await checkSourceDirectory(source.sourceDir);
  const temp = await deps.newTemp();
  const archive = archiveDirectory({ sourceDir: source.sourceDir, logger: deps.logger, onBytes: byteCounter(deps) });
  const outcome = await produceInto(
    temp,
    async () => {
      try {
        await writeAll(temp.handle, untilAborted(archive.stream, deps.signal), () => undefined);
      } catch (err) {
        await archive.result.catch(() => undefined);
        throw err instanceof BackupFailedError ? err : new BackupFailedError(describeIoError('volume archive', err), { cause: err });
      }
      assertAllReadable(await archive.result);
    },
    async () => {
      const result = await archive.result;
      // The headers must decode to exactly the metadata read from the volume (tar-header.ts metadataLine).
      return { result, report: await verifyArchive(temp.path, { expectedMetadataSha256: result.metadataSha256, ...(deps.onBytesCopied ? { onBytes: deps.onBytesCopied } : {}) }) };
    },
  );
  const { result, report } = outcome;
  const details = { source: 'pvc', files: result.files, directories: result.directories, symlinks: result.symlinks, hardLinks: result.hardLinks, sparseFiles: result.sparseFiles, contentBytes: result.bytes, vanished: result.vanished.length, changed: result.changed.length, skipped: result.skipped.length };
  const incomplete = incompleteReason(result);
  return { temp, size: report.size, sha256: report.sha256, details, ...(incomplete ? { incomplete } : {}) };
}

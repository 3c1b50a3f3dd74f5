/**
 * The two sources of a run, each producing a verified temp file: an etcd snapshot (endpoints tried in
 * order, each failure logged with its reason) or a volume archive. The caller commits or discards it.
 */
import { stat } from 'node:fs/promises';
import type { Clock } from '../runtime/clock.ts';
import type { Logger } from '../runtime/logger.ts';
import { verifyArchive } from './archive-verify.ts';
import type { BackupSource } from './backup-args.ts';
import type { TempFile } from './durable-file.ts';
import { EndpointError, readEtcdTls, streamSnapshot, type EtcdTls, type StreamedSnapshot } from './etcd-snapshot.ts';
import { writeAll } from './file-sink.ts';
import { BackupFailedError, describeIoError } from './backup-errors.ts';
import type { Progress } from './progress.ts';
import { SnapshotInvalidError, verifySnapshot } from './snapshot-verify.ts';
import { archiveDirectory, UNREADABLE_LIMIT } from './volume-archive.ts';

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
export interface ProducerDependencies {
  readonly logger: Logger;
  readonly clock: Clock;
  readonly progress: Progress;
  /** Creates a fresh temp file in the destination (already worded errors). */
  readonly newTemp: () => Promise<TempFile>;
  readonly signal?: AbortSignal;
  /** Hears of every chunk copied (the entry point's scavenger). @default none */
  readonly onBytesCopied?: (bytes: number) => void;
}

/** Counts copied bytes for the progress line and the entry point's hook. */
function counter(deps: ProducerDependencies): (bytes: number) => void {
  const hook = deps.onBytesCopied;
  return hook ? (n) => (deps.progress.add(n), hook(n)) : (n) => deps.progress.add(n);
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
  let tls: EtcdTls | undefined;
  if (source.tlsDir !== undefined) {
    try {
      tls = await readEtcdTls(source.tlsDir);
    } catch (err) {
      throw new BackupFailedError((err as Error).message, { cause: err });
    }
  }
  const failures: string[] = [];
  for (const endpoint of source.endpoints) {
    if (deps.signal?.aborted) break;
    const temp = await deps.newTemp();
    // SIGTERM may have come while the temp file was created: streamSnapshot sees it too, but stop here.
    if (deps.signal?.aborted) {
      await temp.discard();
      break;
    }
    deps.progress.reset();
    deps.logger.info({ endpoint }, 'etcd snapshot: streaming');
    try {
      let streamed: StreamedSnapshot | undefined;
      const report = await produceInto(
        temp,
        async () => {
          streamed = await streamSnapshot({ endpoint, tls, file: temp.handle, clock: deps.clock, onBytes: counter(deps), onTotal: (t) => deps.progress.setTotal(t), ...(deps.signal ? { signal: deps.signal } : {}) });
        },
        () => verifySnapshot(temp.path, streamed?.digest),
      );
      deps.logger.info({ endpoint, size: report.size, revision: report.revision, totalKeys: report.totalKeys }, 'etcd snapshot: verified (SHA-256 trailer and bbolt structure)');
      return { temp, size: report.size, sha256: report.sha256, details: { source: 'etcd', endpoint, revision: report.revision, totalKeys: report.totalKeys } };
    } catch (err) {
      if (!(err instanceof EndpointError || err instanceof SnapshotInvalidError)) throw new BackupFailedError(describeIoError('etcd snapshot: cannot write it', err), { cause: err });
      const reason = err instanceof EndpointError ? err.message : `${endpoint}: ${err.message}`;
      failures.push(reason);
      if (deps.signal?.aborted) break;
      deps.logger.warn({ endpoint, reason: err.message }, 'etcd snapshot: endpoint failed; trying the next one');
    }
  }
  throw new BackupFailedError(`etcd snapshot: no endpoint delivered a valid snapshot (${failures.join('; ') || 'aborted'})`);
}

/** Archives the source directory; fails listing the first unreadable paths. */
export async function produceArchive(source: Extract<BackupSource, { kind: 'pvc' }>, deps: ProducerDependencies): Promise<Produced> {
  try {
    if (!(await stat(source.sourceDir)).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR', path: source.sourceDir });
  } catch (err) {
    throw new BackupFailedError(describeIoError(`source directory ${source.sourceDir}`, err), { cause: err });
  }
  const temp = await deps.newTemp();
  const archive = archiveDirectory({ sourceDir: source.sourceDir, logger: deps.logger, onBytes: counter(deps) });
  const signal = deps.signal;
  async function* untilAborted(): AsyncGenerator<Buffer> {
    for await (const chunk of archive.stream) {
      if (signal?.aborted) throw new BackupFailedError('volume archive: aborted (the Pod is being stopped)');
      yield chunk;
    }
  }
  const outcome = await produceInto(
    temp,
    async () => {
      try {
        await writeAll(temp.handle, untilAborted(), () => undefined);
      } catch (err) {
        await archive.result.catch(() => undefined);
        throw err instanceof BackupFailedError ? err : new BackupFailedError(describeIoError('volume archive', err), { cause: err });
      }
      const result = await archive.result;
      if (result.unreadable.length > 0) {
        throw new BackupFailedError(
          `volume archive: cannot read ${result.unreadable.length >= UNREADABLE_LIMIT ? `at least ${UNREADABLE_LIMIT}` : result.unreadable.length} path(s) as uid ${process.getuid?.() ?? '?'}: ${result.unreadable.join(', ')}. ` +
            'Hint: the files belong to another user; set spec.podSecurityContext (runAsUser/runAsGroup/fsGroup/supplementalGroups) to the data owner\'s IDs.',
        );
      }
    },
    async () => {
      const result = await archive.result;
      // The headers must decode to exactly the metadata read from the volume (tar-header.ts metadataLine).
      return { result, report: await verifyArchive(temp.path, { expectedMetadataSha256: result.metadataSha256, ...(deps.onBytesCopied ? { onBytes: deps.onBytesCopied } : {}) }) };
    },
  );
  const { result, report } = outcome;
  const details = { source: 'pvc', files: result.files, directories: result.directories, symlinks: result.symlinks, hardLinks: result.hardLinks, sparseFiles: result.sparseFiles, contentBytes: result.bytes, vanished: result.vanished.length, changed: result.changed.length, skipped: result.skipped.length };
  const incomplete = result.changed.length > 0 ? `${result.changed.length} file(s) changed while read (${result.changed.slice(0, 10).join(', ')})` : undefined;
  return { temp, size: report.size, sha256: report.sha256, details, ...(incomplete ? { incomplete } : {}) };
}

/**
 * What the producers of a run share, whatever the destination (a directory, a directory with
 * `--age-recipient`, a bucket): the byte counter, the etcd TLS read, the "first endpoint that delivers"
 * loop, and the volume archive's source-directory check, abort guard and end-of-archive verdicts. One
 * place each, so the three producers word a failure the same way. The snapshot streamed through the
 * encode pipeline is in snapshot-pipeline.ts: this module is a static import of every run, and the
 * pipeline's age and compression code is for encrypting runs only.
 */
import { stat } from 'node:fs/promises';
import type { Clock } from '../runtime/clock.ts';
import type { Logger } from '../runtime/logger.ts';
import type { BackupSource } from './backup-args.ts';
import { BackupFailedError, describeIoError } from './backup-errors.ts';
import { EndpointError, readEtcdTls, type EtcdTls } from './etcd-snapshot.ts';
import type { Progress } from './progress.ts';
import { SnapshotInvalidError } from './snapshot-verify.ts';
import { UNREADABLE_LIMIT, type ArchiveResult } from './volume-archive.ts';

/** The part of a producer's dependencies that counting and the endpoint loop use. */
export interface CountingDeps {
  readonly logger: Logger;
  readonly progress: Progress;
  readonly signal?: AbortSignal;
  /** Hears of every chunk copied (the entry point's scavenger). @default none */
  readonly onBytesCopied?: (bytes: number) => void;
}

/** Counts copied bytes for the progress line and the entry point's hook. */
export function byteCounter(deps: CountingDeps): (bytes: number) => void {
  const hook = deps.onBytesCopied;
  return hook ? (n) => (deps.progress.add(n), hook(n)) : (n) => deps.progress.add(n);
}

/** The client certificate and CA of `source.tlsDir`, if set; a bad directory fails the run in readEtcdTls's words. */
export async function readSourceTls(source: Extract<BackupSource, { kind: 'etcd' }>): Promise<EtcdTls | undefined> {
  if (source.tlsDir === undefined) return undefined;
  try {
    return await readEtcdTls(source.tlsDir);
  } catch (err) {
    throw new BackupFailedError((err as Error).message, { cause: err });
  }
}

/**
 * Tries `attempt` on each endpoint in order until one delivers. An endpoint's own failure (it does not
 * answer, or its snapshot fails the check) is logged and the next one tried; any other error is the run's
 * and ends the loop at once, as does the signal. `attempt` cleans up after itself and resolves `undefined`
 * when it found the run stopped before it could try its endpoint.
 */
export async function fromFirstEndpoint<T>(endpoints: readonly string[], deps: Pick<CountingDeps, 'logger' | 'signal'>, attempt: (endpoint: string) => Promise<T | undefined>): Promise<T> {
  const failures: string[] = [];
  for (const endpoint of endpoints) {
    if (deps.signal?.aborted) break;
    try {
      const delivered = await attempt(endpoint);
      if (delivered === undefined) break;
      return delivered;
    } catch (err) {
      if (!(err instanceof EndpointError || err instanceof SnapshotInvalidError)) throw err;
      // An EndpointError names its endpoint already; a snapshot check does not.
      failures.push(err instanceof EndpointError ? err.message : `${endpoint}: ${err.message}`);
      if (deps.signal?.aborted) break;
      deps.logger.warn({ endpoint, reason: err.message }, 'etcd snapshot: endpoint failed; trying the next one');
    }
  }
  throw new BackupFailedError(`etcd snapshot: no endpoint delivered a valid snapshot (${failures.join('; ') || 'aborted'})`);
}

/** What the etcd snapshot producers need of the run. */
export interface SnapshotPipelineDeps extends CountingDeps {
  readonly clock: Clock;
}

/** Fails the run unless `dir` is a directory, in words naming the errno. */
export async function checkSourceDirectory(dir: string): Promise<void> {
  try {
    if (!(await stat(dir)).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR', path: dir });
  } catch (err) {
    throw new BackupFailedError(describeIoError(`source directory ${dir}`, err), { cause: err });
  }
}

/** Passes `chunks` on until `signal` fires, then fails the archive (the Pod is being stopped). */
export async function* untilAborted(chunks: AsyncIterable<Buffer>, signal: AbortSignal | undefined): AsyncGenerator<Buffer> {
  for await (const chunk of chunks) {
    if (signal?.aborted) throw new BackupFailedError('volume archive: aborted (the Pod is being stopped)');
    yield chunk;
  }
}

/** Fails the run when the archive skipped paths it could not read, naming them and the usual cure. */
export function assertAllReadable(result: ArchiveResult): void {
  if (result.unreadable.length === 0) return;
  const count = result.unreadable.length >= UNREADABLE_LIMIT ? `at least ${UNREADABLE_LIMIT}` : result.unreadable.length;
  throw new BackupFailedError(
    `volume archive: cannot read ${count} path(s) as uid ${process.getuid?.() ?? '?'}: ${result.unreadable.join(', ')}. ` +
      "Hint: the files belong to another user; set spec.podSecurityContext (runAsUser/runAsGroup/fsGroup/supplementalGroups) to the data owner's IDs.",
  );
}

/** Fails the run unless the tar headers (as a tar check decoded them) carry exactly the metadata read from the volume. */
export function assertSameMetadata(decodedSha256: string, result: ArchiveResult): void {
  // Both sides are tar-header.ts metadataLine digests.
  if (decodedSha256 !== result.metadataSha256) throw new BackupFailedError('volume archive: its headers decode to other metadata (names, modes, owners, mtimes, sizes, links or sparse maps) than was read from the volume');
}

/** Why the backup is incomplete (files changed while read, the first ten named), or undefined. */
export function incompleteReason(result: ArchiveResult): string | undefined {
  return result.changed.length > 0 ? `${result.changed.length} file(s) changed while read (${result.changed.slice(0, 10).join(', ')})` : undefined;
}

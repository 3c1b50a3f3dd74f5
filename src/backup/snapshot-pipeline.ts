/**
 * An etcd snapshot through the encode pipeline (compression, age) while it lands in a scratch file: the
 * etcd path of the encrypting producers (a directory with `--age-recipient`, a bucket).
 *
 * Its own module, apart from producer-common.ts, because that one is a static import of every run: from
 * here the encode pipeline pulls in age-encryption (with @noble's post-quantum, curve and hash code:
 * 285 KB of bundle, 2-3 MiB of heap). Loaded by every unencrypted etcd run since 07d4ea8, it made V8
 * run more full GCs during a 211 MB snapshot (9-14 instead of 8-9 with 1 MiB scavenges, 19-22 instead
 * of 7-8 with 4 MiB; docs/performance.md "The backup runner").
 */
import { tmpdir } from 'node:os';
import { BackupFailedError, describeIoError } from './backup-errors.ts';
import { tempFilePrefix } from './backup-names.ts';
import { TempFile } from './durable-file.ts';
import { streamSnapshot, type EtcdTls } from './etcd-snapshot.ts';
import { sendThrough, type EncodedSink, type PipelineSettings } from './pipeline/encode-pipeline.ts';
import { FileFollower } from './pipeline/file-follower.ts';
import { byteCounter, type SnapshotPipelineDeps } from './producer-common.ts';
import { verifySnapshot, type SnapshotReport } from './snapshot-verify.ts';

/**
 * Streams `endpoint`'s snapshot into `scratch` and, from that file as it grows, through the pipeline into
 * `sink`; once etcd ends the stream, checks the scratch file (trailer, bbolt meta pages, bucket walk)
 * while its tail is still being sent. A failed send stops the snapshot stream at once and is the error
 * (not the endpoint's, so no next endpoint is tried), unless the run was stopped.
 */
export async function snapshotThroughPipeline(endpoint: string, tls: EtcdTls | undefined, scratch: TempFile, settings: PipelineSettings, sink: EncodedSink, deps: SnapshotPipelineDeps): Promise<SnapshotReport> {
  const count = byteCounter(deps);
  const follower = new FileFollower(scratch.path);
  const stop = new AbortController();
  let sendFailure: unknown;
  const sending = sendThrough(follower.stream(), [], settings, sink, deps.onBytesCopied);
  sending.catch((err: unknown) => {
    sendFailure ??= err;
    stop.abort(err);
  });
  const signal = deps.signal ? AbortSignal.any([deps.signal, stop.signal]) : stop.signal;
  let streamed;
  try {
    streamed = await streamSnapshot({ endpoint, tls, file: scratch.handle, clock: deps.clock, onBytes: (n) => (follower.wrote(n), count(n)), onTotal: (t) => deps.progress.setTotal(t), signal });
  } catch (err) {
    follower.fail(err as Error);
    await sending.catch(() => undefined);
    throw sendFailure !== undefined && !deps.signal?.aborted ? sendFailure : err;
  }
  follower.end(streamed.bytes);
  await scratch.sync();
  const [report] = await Promise.all([verifySnapshot(scratch.path, streamed.digest), sending]);
  return report;
}

/** A fresh scratch file in TMPDIR (the Pod's emptyDir): where a snapshot lands for bbolt's random-access check. */
export async function createScratch(schedule: string): Promise<TempFile> {
  try {
    return await TempFile.create(tmpdir(), tempFilePrefix(schedule));
  } catch (err) {
    throw new BackupFailedError(describeIoError(`cannot create a scratch file in ${tmpdir()} (TMPDIR)`, err), { cause: err });
  }
}

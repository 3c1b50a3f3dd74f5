/**
 * The two sources of a run to a directory with `--age-recipient`: the bucket's pipeline (compression,
 * then age: src/backup/pipeline/) into a temp file in the destination, so the claim never holds the
 * plaintext. The plaintext checks run on the stream before encryption, as they do for a bucket:
 *
 * - etcd: the snapshot streams into a scratch file in TMPDIR (the Pod's emptyDir, gone with the Pod;
 *   bbolt's bucket walk needs random access) and, from that file as it grows, through the pipeline into
 *   the temp file; once etcd ends the stream the scratch file gets the usual checks (etcd's SHA-256
 *   trailer, bbolt meta pages, a walk of every bucket). A snapshot that fails them never gets a name.
 * - pvc: the plain tar (no gzip: the pipeline compresses) passes the strict tar reader on its way, and
 *   its headers must decode to the metadata read from the volume.
 *
 * Then the temp file is fsynced and read back: its SHA-256 must be that of the bytes written, and it
 * must start with age's header line. Only then may the caller link it to its final name.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { Readable } from 'node:stream';
import type { BackupSource } from './backup-args.ts';
import { BackupFailedError, describeIoError } from './backup-errors.ts';
import { tempFilePrefix } from './backup-names.ts';
import { TempFile } from './durable-file.ts';
import { EndpointError, readEtcdTls, streamSnapshot, type EtcdTls } from './etcd-snapshot.ts';
import { AGE_MAGIC } from './pipeline/age-format.ts';
import { sendThrough, type EncodedSink, type PipelineSettings } from './pipeline/encode-pipeline.ts';
import { FileFollower } from './pipeline/file-follower.ts';
import { tarChecker } from './pipeline/tar-check.ts';
import type { Produced, ProducerDependencies } from './producers.ts';
import { SnapshotInvalidError, verifySnapshot } from './snapshot-verify.ts';
import { archiveDirectory, UNREADABLE_LIMIT } from './volume-archive.ts';

/** A temp file fed the pipeline's output at increasing positions, hashing what it stores. */
class HashingFileSink implements EncodedSink {
  readonly #hash = createHash('sha256');
  #size = 0;

  constructor(private readonly temp: TempFile) {}

  async write(chunk: Buffer): Promise<void> {
    let offset = 0;
    // handle.write may write less than asked (a signal): go on from where it stopped.
    while (offset < chunk.length) {
      const { bytesWritten } = await this.temp.handle.write(chunk, offset, chunk.length - offset, this.#size + offset);
      offset += bytesWritten;
    }
    this.#hash.update(chunk);
    this.#size += chunk.length;
  }

  /** fsyncs, reads the file back and checks it holds exactly the bytes written; resolves with their size and SHA-256. */
  async seal(): Promise<{ size: number; sha256: string }> {
    await this.temp.sync();
    const sha256 = this.#hash.digest('hex');
    const back = createHash('sha256');
    let head = Buffer.alloc(0);
    for await (const chunk of createReadStream(this.temp.path) as AsyncIterable<Buffer>) {
      if (head.length < AGE_MAGIC.length) head = Buffer.concat([head, chunk.subarray(0, AGE_MAGIC.length)]);
      back.update(chunk);
    }
    const { size } = await stat(this.temp.path);
    const reread = back.digest('hex');
    if (size !== this.#size || reread !== sha256) throw new BackupFailedError(`the encrypted file read back (${size} bytes, SHA-256 ${reread}) is not what was written (${this.#size} bytes, SHA-256 ${sha256}): the destination's storage lost or changed data`);
    if (!head.subarray(0, AGE_MAGIC.length).equals(AGE_MAGIC)) throw new BackupFailedError('the encrypted file does not start with the age header line');
    return { size, sha256 };
  }
}

function counter(deps: ProducerDependencies): (n: number) => void {
  const hook = deps.onBytesCopied;
  return hook ? (n) => (deps.progress.add(n), hook(n)) : (n) => deps.progress.add(n);
}

/** Streams a snapshot from the first endpoint that delivers a valid one, encrypted into a temp file. */
export async function produceEncryptedSnapshot(source: Extract<BackupSource, { kind: 'etcd' }>, settings: PipelineSettings, deps: ProducerDependencies & { readonly schedule: string }): Promise<Produced> {
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
    let scratch: TempFile;
    try {
      scratch = await TempFile.create(tmpdir(), tempFilePrefix(deps.schedule));
    } catch (err) {
      throw new BackupFailedError(describeIoError(`cannot create a scratch file in ${tmpdir()} (TMPDIR)`, err), { cause: err });
    }
    const temp = await deps.newTemp().catch(async (err: unknown) => {
      await scratch.discard();
      throw err;
    });
    try {
      deps.progress.reset();
      deps.logger.info({ endpoint }, 'etcd snapshot: streaming (compressed and age-encrypted into the destination)');
      const follower = new FileFollower(scratch.path);
      const sink = new HashingFileSink(temp);
      // A failed write (disk full) stops the snapshot stream at once and is the run's error.
      const stop = new AbortController();
      let writeFailure: unknown;
      const sending = sendThrough(follower.stream(), [], settings, sink, deps.onBytesCopied);
      sending.catch((err: unknown) => {
        writeFailure ??= err;
        stop.abort(err);
      });
      const signal = deps.signal ? AbortSignal.any([deps.signal, stop.signal]) : stop.signal;
      let streamed;
      try {
        streamed = await streamSnapshot({ endpoint, tls, file: scratch.handle, clock: deps.clock, onBytes: (n) => (follower.wrote(n), count(n)), onTotal: (t) => deps.progress.setTotal(t), signal });
      } catch (err) {
        follower.fail(err as Error);
        await sending.catch(() => undefined);
        throw writeFailure !== undefined && !deps.signal?.aborted ? writeFailure : err;
      }
      follower.end(streamed.bytes);
      await scratch.sync();
      const [report] = await Promise.all([verifySnapshot(scratch.path, streamed.digest), sending]);
      const sealed = await sink.seal();
      deps.logger.info({ endpoint, size: report.size, revision: report.revision, totalKeys: report.totalKeys }, 'etcd snapshot: verified (SHA-256 trailer and bbolt structure) before encryption');
      return { temp, size: sealed.size, sha256: sealed.sha256, details: { source: 'etcd', endpoint, revision: report.revision, totalKeys: report.totalKeys, plainSize: report.size, snapshotSha256: report.sha256, compression: settings.compression, encrypted: true } };
    } catch (err) {
      await temp.discard();
      if (err instanceof BackupFailedError) throw err;
      if (!(err instanceof EndpointError || err instanceof SnapshotInvalidError)) throw new BackupFailedError(describeIoError('etcd snapshot: cannot write it', err), { cause: err });
      failures.push(err instanceof EndpointError ? err.message : `${endpoint}: ${err.message}`);
      if (deps.signal?.aborted) break;
      deps.logger.warn({ endpoint, reason: err.message }, 'etcd snapshot: endpoint failed; trying the next one');
    } finally {
      await scratch.discard();
    }
  }
  throw new BackupFailedError(`etcd snapshot: no endpoint delivered a valid snapshot (${failures.join('; ') || 'aborted'})`);
}

/** Archives the source directory (plain tar, checked) through compression and age into a temp file. */
export async function produceEncryptedArchive(source: Extract<BackupSource, { kind: 'pvc' }>, settings: PipelineSettings, deps: ProducerDependencies): Promise<Produced> {
  try {
    if (!(await stat(source.sourceDir)).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR', path: source.sourceDir });
  } catch (err) {
    throw new BackupFailedError(describeIoError(`source directory ${source.sourceDir}`, err), { cause: err });
  }
  const temp = await deps.newTemp();
  try {
    const archive = archiveDirectory({ sourceDir: source.sourceDir, logger: deps.logger, onBytes: counter(deps), output: 'tar' });
    const check = tarChecker();
    const sink = new HashingFileSink(temp);
    const signal = deps.signal;
    async function* untilAborted(): AsyncGenerator<Buffer> {
      for await (const chunk of archive.stream) {
        if (signal?.aborted) throw new BackupFailedError('volume archive: aborted (the Pod is being stopped)');
        yield chunk;
      }
    }
    try {
      await sendThrough(Readable.from(untilAborted(), { objectMode: false }), [check.stream], settings, sink, deps.onBytesCopied);
    } catch (err) {
      await archive.result.catch(() => undefined);
      throw err instanceof BackupFailedError ? err : new BackupFailedError(describeIoError('volume archive', err), { cause: err });
    }
    const result = await archive.result;
    if (result.unreadable.length > 0) {
      throw new BackupFailedError(
        `volume archive: cannot read ${result.unreadable.length >= UNREADABLE_LIMIT ? `at least ${UNREADABLE_LIMIT}` : result.unreadable.length} path(s) as uid ${process.getuid?.() ?? '?'}: ${result.unreadable.join(', ')}. ` +
          "Hint: the files belong to another user; set spec.podSecurityContext (runAsUser/runAsGroup/fsGroup/supplementalGroups) to the data owner's IDs.",
      );
    }
    const tar = await check.report();
    // The headers must decode to exactly the metadata read from the volume (tar-header.ts metadataLine).
    if (tar.metadataSha256 !== result.metadataSha256) throw new BackupFailedError('volume archive: its headers decode to other metadata (names, modes, owners, mtimes, sizes, links or sparse maps) than was read from the volume');
    const sealed = await sink.seal();
    const details = { source: 'pvc', entries: tar.entries, files: result.files, directories: result.directories, symlinks: result.symlinks, hardLinks: result.hardLinks, sparseFiles: result.sparseFiles, contentBytes: result.bytes, plainSize: check.bytes(), compression: settings.compression, encrypted: true, vanished: result.vanished.length, changed: result.changed.length, skipped: result.skipped.length };
    const incomplete = result.changed.length > 0 ? `${result.changed.length} file(s) changed while read (${result.changed.slice(0, 10).join(', ')})` : undefined;
    return { temp, size: sealed.size, sha256: sealed.sha256, details, ...(incomplete ? { incomplete } : {}) };
  } catch (err) {
    await temp.discard();
    throw err;
  }
}

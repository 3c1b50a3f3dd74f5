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
import { Readable } from 'node:stream';
import type { BackupSource } from './backup-args.ts';
import { BackupFailedError, describeIoError } from './backup-errors.ts';
import type { TempFile } from './durable-file.ts';
import { EndpointError } from './etcd-snapshot.ts';
import { AGE_MAGIC } from './pipeline/age-format.ts';
import { sendThrough, type EncodedSink, type PipelineSettings } from './pipeline/encode-pipeline.ts';
import { tarChecker } from './pipeline/tar-check.ts';
import type { Produced, ProducerDependencies } from './producers.ts';
import { SnapshotInvalidError } from './snapshot-verify.ts';
import { archiveDirectory } from './volume-archive.ts';
import { assertAllReadable, assertSameMetadata, byteCounter, checkSourceDirectory, fromFirstEndpoint, incompleteReason, readSourceTls, untilAborted } from './producer-common.ts';
import { createScratch, snapshotThroughPipeline } from './snapshot-pipeline.ts';

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

/** Streams a snapshot from the first endpoint that delivers a valid one, encrypted into a temp file. */
export async function produceEncryptedSnapshot(source: Extract<BackupSource, { kind: 'etcd' }>, settings: PipelineSettings, deps: ProducerDependencies & { readonly schedule: string }): Promise<Produced> {
  const tls = await readSourceTls(source);
  return fromFirstEndpoint(source.endpoints, deps, async (endpoint) => {
    const scratch = await createScratch(deps.schedule);
    try {
      const temp = await deps.newTemp();
      try {
        deps.progress.reset();
        deps.logger.info({ endpoint }, 'etcd snapshot: streaming (compressed and age-encrypted into the destination)');
        const sink = new HashingFileSink(temp);
        // A failed write (disk full) is the run's error (no next endpoint).
        const report = await snapshotThroughPipeline(endpoint, tls, scratch, settings, sink, deps);
        const sealed = await sink.seal();
        deps.logger.info({ endpoint, size: report.size, revision: report.revision, totalKeys: report.totalKeys }, 'etcd snapshot: verified (SHA-256 trailer and bbolt structure) before encryption');
        return { temp, size: sealed.size, sha256: sealed.sha256, details: { source: 'etcd', endpoint, revision: report.revision, totalKeys: report.totalKeys, plainSize: report.size, snapshotSha256: report.sha256, compression: settings.compression, encrypted: true } };
      } catch (err) {
        await temp.discard();
        if (err instanceof BackupFailedError || err instanceof EndpointError || err instanceof SnapshotInvalidError) throw err;
        throw new BackupFailedError(describeIoError('etcd snapshot: cannot write it', err), { cause: err });
      }
    } finally {
      await scratch.discard();
    }
  });
}

/** Archives the source directory (plain tar, checked) through compression and age into a temp file. */
export async function produceEncryptedArchive(source: Extract<BackupSource, { kind: 'pvc' }>, settings: PipelineSettings, deps: ProducerDependencies): Promise<Produced> {
  await checkSourceDirectory(source.sourceDir);
  const temp = await deps.newTemp();
  try {
    const archive = archiveDirectory({ sourceDir: source.sourceDir, logger: deps.logger, onBytes: byteCounter(deps), output: 'tar' });
    const check = tarChecker();
    const sink = new HashingFileSink(temp);
    try {
      await sendThrough(Readable.from(untilAborted(archive.stream, deps.signal), { objectMode: false }), [check.stream], settings, sink, deps.onBytesCopied);
    } catch (err) {
      await archive.result.catch(() => undefined);
      throw err instanceof BackupFailedError ? err : new BackupFailedError(describeIoError('volume archive', err), { cause: err });
    }
    const result = await archive.result;
    assertAllReadable(result);
    const tar = await check.report();
    assertSameMetadata(tar.metadataSha256, result);
    const sealed = await sink.seal();
    const details = { source: 'pvc', entries: tar.entries, files: result.files, directories: result.directories, symlinks: result.symlinks, hardLinks: result.hardLinks, sparseFiles: result.sparseFiles, contentBytes: result.bytes, plainSize: check.bytes(), compression: settings.compression, encrypted: true, vanished: result.vanished.length, changed: result.changed.length, skipped: result.skipped.length };
    const incomplete = incompleteReason(result);
    return { temp, size: sealed.size, sha256: sealed.sha256, details, ...(incomplete ? { incomplete } : {}) };
  } catch (err) {
    await temp.discard();
    throw err;
  }
}

/**
 * A multipart upload the runner drives itself, with the AWS SDK's commands: parts sent as they fill, a
 * few at a time (memory: `partSize × (concurrency + 1)`: 20 MiB for objects up to ~5 GB),
 * and the object made visible only by an explicit {@link MultipartUpload.complete} once the run has
 * checked what it sent. Until then nothing is visible under the key; {@link MultipartUpload.abort}
 * discards the parts.
 *
 * Why not `@aws-sdk/lib-storage`'s `Upload`: it completes the upload as soon as its input ends (a run
 * must verify first), and on abort it rejects at once while the AbortMultipartUpload is still to be
 * sent by a task nobody awaits, which a SIGTERMed process may never send. Here every part's MD5 is
 * also kept, so the ETag S3 computes for a multipart object (MD5 of the parts' MD5s, `-<parts>`) can be
 * checked against the bucket's.
 */
import { createHash, type Hash } from 'node:crypto';
import { AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CreateMultipartUploadCommand, UploadPartCommand, type S3Client } from '@aws-sdk/client-s3';

/**
 * Size of the first 1,000 parts: S3's minimum, 5 MiB; it doubles every 1,000 parts, so memory stays
 * small for the usual sizes (5 GB and less) and 10,000 parts still hold about 5 TB.
 */
export const PART_SIZE = 5 << 20;
/** Parts between two doublings of the part size. */
const PARTS_PER_SIZE = 1000;
/** S3's largest part. */
const MAX_PART_SIZE = 5 * 1024 ** 3;
/** Parts in flight at once. */
export const PART_CONCURRENCY = 3;
/** S3's limit of parts per upload. */
const MAX_PARTS = 10_000;
/** How long an AbortMultipartUpload may take (sent after a failure or a SIGTERM, never with that signal). */
const ABORT_TIMEOUT_MS = 20_000;

/** Options of {@link MultipartUpload.start}. */
export interface MultipartOptions {
  readonly client: S3Client;
  readonly bucket: string;
  readonly key: string;
  /** User metadata (`x-amz-meta-*`). */
  readonly metadata?: Readonly<Record<string, string>>;
  /** Size of the first parts (doubling every 1,000 parts). @default PART_SIZE */
  readonly partSize?: number;
  /** @default PART_CONCURRENCY */
  readonly concurrency?: number;
  /** Cancels requests in flight (SIGTERM). */
  readonly signal?: AbortSignal;
  /** Hears of every part the server accepted (bytes). */
  readonly onPartUploaded?: (bytes: number) => void;
}

/** What was sent. */
export interface SentObject {
  readonly size: number;
  /** SHA-256 of every byte sent, hex. */
  readonly sha256: string;
  /** The ETag S3 gives the completed object: `"<md5 of the parts' MD5s>-<parts>"`. */
  readonly expectedEtag: string;
  readonly parts: number;
}

/** A started multipart upload; write, then {@link finish} and {@link complete}, or {@link abort}. */
export class MultipartUpload {
  readonly #options: MultipartOptions;
  readonly #uploadId: string;
  readonly #partSize: number;
  readonly #concurrency: number;
  readonly #sha256: Hash = createHash('sha256');
  readonly #partMd5s: Buffer[] = [];
  readonly #parts: { PartNumber: number; ETag: string }[] = [];
  readonly #inFlight = new Set<Promise<void>>();
  /** The part being filled (allocated when its first byte comes), and how much of it is filled. */
  #part: Buffer | undefined;
  #buffered = 0;
  /**
   * Part buffers whose upload is done, for the next parts: `concurrency + 1` buffers for the whole run
   * instead of a fresh 5 MiB allocation per part, which malloc serves from its heap once its mmap
   * threshold has risen, leaving the process's RSS higher with every part.
   */
  readonly #free: Buffer[] = [];
  #size = 0;
  #failure: unknown;
  #ended = false;

  private constructor(options: MultipartOptions, uploadId: string) {
    this.#options = options;
    this.#uploadId = uploadId;
    this.#partSize = options.partSize ?? PART_SIZE;
    this.#concurrency = options.concurrency ?? PART_CONCURRENCY;
  }

  /** Creates the upload (CreateMultipartUpload): nothing is visible under the key yet. */
  static async start(options: MultipartOptions): Promise<MultipartUpload> {
    const { UploadId } = await options.client.send(
      new CreateMultipartUploadCommand({ Bucket: options.bucket, Key: options.key, ContentType: 'application/octet-stream', ...(options.metadata ? { Metadata: { ...options.metadata } } : {}) }),
      options.signal ? { abortSignal: options.signal } : {},
    );
    if (!UploadId) throw new Error('CreateMultipartUpload returned no UploadId');
    return new MultipartUpload(options, UploadId);
  }

  /** The upload's id (what ListMultipartUploads shows until it is completed or aborted). */
  get uploadId(): string {
    return this.#uploadId;
  }

  /** Adds bytes; resolves once they are buffered and at most `concurrency` parts are in flight. */
  async write(chunk: Buffer): Promise<void> {
    this.#throwIfFailed();
    this.#sha256.update(chunk);
    this.#size += chunk.length;
    let offset = 0;
    while (offset < chunk.length) {
      // One copy into the part's own buffer: no list of pieces to join, and no producer buffer pinned.
      this.#part ??= this.#takeBuffer(this.#currentPartSize());
      const copied = chunk.copy(this.#part, this.#buffered, offset);
      this.#buffered += copied;
      offset += copied;
      if (this.#buffered === this.#part.length) await this.#sendBuffered();
    }
  }

  #takeBuffer(size: number): Buffer {
    const reused = this.#free.pop();
    return reused !== undefined && reused.length === size ? reused : Buffer.allocUnsafeSlow(size);
  }

  /** The size of the part being filled (see {@link PART_SIZE}). */
  #currentPartSize(): number {
    return Math.min(MAX_PART_SIZE, this.#partSize * 2 ** Math.floor(this.#partMd5s.length / PARTS_PER_SIZE));
  }

  /** Sends the last part and waits for every part; the object is still not visible. */
  async finish(): Promise<SentObject> {
    if (this.#ended) throw new Error('multipart upload already finished');
    this.#throwIfFailed();
    // An empty object still needs one (empty) part.
    if (this.#buffered > 0 || this.#parts.length + this.#inFlight.size === 0) await this.#sendBuffered();
    await Promise.all(this.#inFlight);
    this.#throwIfFailed();
    this.#ended = true;
    const etag = createHash('md5').update(Buffer.concat(this.#partMd5s)).digest('hex');
    return { size: this.#size, sha256: this.#sha256.digest('hex'), expectedEtag: `"${etag}-${this.#partMd5s.length}"`, parts: this.#partMd5s.length };
  }

  /** Makes the object visible under its key (CompleteMultipartUpload); call after {@link finish}. */
  async complete(): Promise<void> {
    if (!this.#ended) throw new Error('complete() before finish()');
    const parts = [...this.#parts].sort((a, b) => a.PartNumber - b.PartNumber);
    await this.#options.client.send(
      new CompleteMultipartUploadCommand({ Bucket: this.#options.bucket, Key: this.#options.key, UploadId: this.#uploadId, MultipartUpload: { Parts: parts } }),
      this.#options.signal ? { abortSignal: this.#options.signal } : {},
    );
  }

  /** Discards the upload and its parts (AbortMultipartUpload), waiting for parts still in flight first. */
  async abort(): Promise<void> {
    await Promise.allSettled(this.#inFlight);
    await this.#options.client.send(new AbortMultipartUploadCommand({ Bucket: this.#options.bucket, Key: this.#options.key, UploadId: this.#uploadId }), { abortSignal: AbortSignal.timeout(ABORT_TIMEOUT_MS) });
  }

  #throwIfFailed(): void {
    if (this.#failure !== undefined) throw this.#failure;
  }

  async #sendBuffered(): Promise<void> {
    const buffer = this.#part;
    const body = buffer === undefined ? Buffer.alloc(0) : buffer.subarray(0, this.#buffered);
    this.#part = undefined;
    this.#buffered = 0;
    const partNumber = this.#partMd5s.length + 1;
    if (partNumber > MAX_PARTS) throw new Error(`the object exceeds S3's ${MAX_PARTS} parts`);
    const md5 = createHash('md5').update(body).digest();
    this.#partMd5s.push(md5);
    const { client, bucket, key, signal } = this.#options;
    const sent: Promise<void> = client
      .send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: this.#uploadId, PartNumber: partNumber, Body: body, ContentLength: body.length, ContentMD5: md5.toString('base64') }), signal ? { abortSignal: signal } : {})
      .then(
        ({ ETag }) => {
          this.#parts.push({ PartNumber: partNumber, ETag: ETag ?? `"${md5.toString('hex')}"` });
          this.#options.onPartUploaded?.(body.length);
        },
        (err: unknown) => {
          this.#failure ??= err;
        },
      )
      .finally(() => {
        this.#inFlight.delete(sent);
        // The request is over (retries included): its bytes may be overwritten.
        if (buffer !== undefined) this.#free.push(buffer);
      });
    this.#inFlight.add(sent);
    while (this.#inFlight.size >= this.#concurrency) await Promise.race(this.#inFlight);
    this.#throwIfFailed();
  }
}

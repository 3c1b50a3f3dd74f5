/**
 * A multipart upload the runner drives itself, with the AWS SDK's commands: parts of a fixed size sent
 * as they fill, a few at a time (memory: `partSize × (concurrency + 1)` whatever the object's size),
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

/** Part size: 8 MiB (S3's minimum is 5 MiB; 10,000 parts make 80 GiB per object). */
export const PART_SIZE = 8 << 20;
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
  /** @default PART_SIZE */
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
  #buffer: Buffer[] = [];
  #buffered = 0;
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
    let rest = chunk;
    while (this.#buffered + rest.length >= this.#partSize) {
      const take = this.#partSize - this.#buffered;
      this.#buffer.push(rest.subarray(0, take));
      rest = rest.subarray(take);
      await this.#sendBuffered();
    }
    if (rest.length > 0) {
      // A copy: the producer may reuse its buffer, and a slice would pin a larger one.
      this.#buffer.push(Buffer.from(rest));
      this.#buffered += rest.length;
    }
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
    const body = this.#buffer.length === 1 ? this.#buffer[0]! : Buffer.concat(this.#buffer);
    this.#buffer = [];
    this.#buffered = 0;
    const partNumber = this.#partMd5s.length + 1;
    if (partNumber > MAX_PARTS) throw new Error(`the object exceeds ${MAX_PARTS} parts of ${this.#partSize} bytes`);
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
      .finally(() => this.#inFlight.delete(sent));
    this.#inFlight.add(sent);
    while (this.#inFlight.size >= this.#concurrency) await Promise.race(this.#inFlight);
    this.#throwIfFailed();
  }
}

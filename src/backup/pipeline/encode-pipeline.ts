/**
 * The stages between a backup's bytes and the bucket, in the order of the object's suffixes:
 * compression (`.zst`/`.gz`), then age encryption (`.age`), then the multipart upload, which hashes
 * what it sends. Streams with backpressure end to end: the upload's part queue holds the producer back.
 */
import type { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ageEncryptStream } from './age-stream.ts';
import { compressor } from './compression.ts';
import type { Compression } from './object-names.ts';
import type { MultipartUpload } from './s3-multipart.ts';

/** What the pipeline applies. */
export interface PipelineSettings {
  readonly compression: Compression;
  /** The age header and payload key (src/backup/object-store/age-stream.ts); unset: no encryption. */
  readonly age: { readonly prefix: Buffer; readonly key: Buffer } | undefined;
}

/**
 * Sends `source` through `extra` stages (e.g. a tar check), compression and encryption into `upload`;
 * resolves when every byte was handed to the upload (call `upload.finish()` next).
 */
export async function sendThrough(source: Readable, extra: readonly Transform[], settings: PipelineSettings, upload: MultipartUpload, onSent?: (bytes: number) => void): Promise<void> {
  const stages: Transform[] = [...extra, compressor(settings.compression)];
  if (settings.age) stages.push(ageEncryptStream(settings.age));
  const sink = async (chunks: AsyncIterable<Buffer>): Promise<void> => {
    for await (const chunk of chunks) {
      await upload.write(chunk);
      onSent?.(chunk.length);
    }
  };
  await (pipeline as unknown as (...streams: unknown[]) => Promise<void>)(source, ...stages, sink);
}

/**
 * The stages between a backup's bytes and where they are stored, in the order of the name's suffixes:
 * compression (`.zst`/`.gz`), then age encryption (`.age`), then the sink (a bucket's multipart upload,
 * or a temp file in the destination directory), which hashes what it stores. Streams with backpressure
 * end to end: the sink's awaited writes hold the producer back.
 */
import type { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ageEncryptStream } from './age-stream.ts';
import { compressor, type Compression } from './compression.ts';

/** What the pipeline applies. */
export interface PipelineSettings {
  readonly compression: Compression;
  /** The age header and payload key (src/backup/pipeline/age-stream.ts); unset: no encryption. */
  readonly age: { readonly prefix: Buffer; readonly key: Buffer } | undefined;
}

/** Where the encoded bytes go: each chunk is awaited before the next one is handed over. */
export interface EncodedSink {
  write(chunk: Buffer): Promise<void>;
}

/**
 * Sends `source` through `extra` stages (plaintext checks: a tar check), compression and encryption
 * into `sink`; resolves when every byte was handed to it (the caller then finishes the sink).
 */
export async function sendThrough(source: Readable, extra: readonly Transform[], settings: PipelineSettings, sink: EncodedSink, onSent?: (bytes: number) => void): Promise<void> {
  const stages: Transform[] = [...extra, compressor(settings.compression)];
  if (settings.age) stages.push(ageEncryptStream(settings.age));
  const consume = async (chunks: AsyncIterable<Buffer>): Promise<void> => {
    for await (const chunk of chunks) {
      await sink.write(chunk);
      onSent?.(chunk.length);
    }
  };
  await (pipeline as unknown as (...streams: unknown[]) => Promise<void>)(source, ...stages, consume);
}

/**
 * The compression stage of the backup pipeline (bucket, and an encrypted directory backup), Node's own zlib (no dependency): zstd (Node ≥ 22.15 /
 * 23.8, `zlib.createZstdCompress`) by default, gzip, or none. docs/object-storage.md has the
 * measurements behind the default: on etcd data zstd level 3 compresses about as well as gzip -6 at
 * several times its speed, fast enough not to slow an upload down.
 */
import { Transform, PassThrough } from 'node:stream';
import { constants, createGunzip, createGzip, createZstdCompress, createZstdDecompress } from 'node:zlib';

/** Compression stage of the pipeline. */
export type Compression = 'zstd' | 'gzip' | 'none';

/** The suffix each compression adds (none: no suffix). */
export const COMPRESSION_SUFFIX: Readonly<Record<Compression, string>> = { zstd: '.zst', gzip: '.gz', none: '' };

/** zstd level of the runner (zstd's own default). */
export const ZSTD_LEVEL = 3;
/** gzip level of the runner (gzip's own default). */
export const GZIP_LEVEL = 6;

/** zlib's output chunk: one age chunk (zlib's default, 16 KiB, means four times the calls downstream). */
const OUTPUT_CHUNK = 64 * 1024;

/** A compressing Transform for `compression` (`none`: a pass-through). */
export function compressor(compression: Compression): Transform {
  switch (compression) {
    case 'zstd':
      return createZstdCompress({ chunkSize: OUTPUT_CHUNK, params: { [constants.ZSTD_c_compressionLevel]: ZSTD_LEVEL, [constants.ZSTD_c_checksumFlag]: 1 } });
    case 'gzip':
      return createGzip({ level: GZIP_LEVEL, chunkSize: OUTPUT_CHUNK });
    case 'none':
      return new PassThrough();
  }
}

/** The decompressing Transform undoing {@link compressor}. */
export function decompressor(compression: Compression): Transform {
  switch (compression) {
    case 'zstd':
      return createZstdDecompress();
    case 'gzip':
      return createGunzip();
    case 'none':
      return new PassThrough();
  }
}

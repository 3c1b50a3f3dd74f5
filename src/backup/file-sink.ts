/**
 * Writes a stream of buffers to an open file in batches of up to 1 MiB (one writev each): fewer
 * syscalls than one per 16–32 KiB chunk, and the source is pulled only as fast as the disk takes it.
 */
import type { FileHandle } from 'node:fs/promises';

/** Batch size of {@link writeAll}. */
export const WRITE_BATCH_BYTES = 1 << 20;

/**
 * Writes every chunk of `source` to `file` from position 0 on; `onBytes` hears of each batch written.
 * Resolves with the byte count; a write error (ENOSPC, EROFS, EIO) rejects as is.
 */
export async function writeAll(file: FileHandle, source: AsyncIterable<Buffer>, onBytes: (n: number) => void): Promise<number> {
  let written = 0;
  let batch: Buffer[] = [];
  let batchBytes = 0;
  const flush = async (): Promise<void> => {
    while (batchBytes > 0) {
      const { bytesWritten } = await file.writev(batch, written);
      written += bytesWritten;
      onBytes(bytesWritten);
      if (bytesWritten === batchBytes) break;
      // A short write (rare, e.g. a signal): keep the unwritten tail and go on.
      const rest = Buffer.concat(batch).subarray(bytesWritten);
      batch = [rest];
      batchBytes = rest.length;
    }
    batch = [];
    batchBytes = 0;
  };
  for await (const chunk of source) {
    batch.push(chunk);
    batchBytes += chunk.length;
    if (batchBytes >= WRITE_BATCH_BYTES) await flush();
  }
  await flush();
  return written;
}

/**
 * Reads a file while another task is still writing it, like `tail -f` with an end: the writer reports
 * each batch it wrote ({@link FileFollower.wrote}) and finally the total ({@link FileFollower.end});
 * the reader never reads past what was reported. The file is the buffer between a fast producer (an
 * etcd snapshot stream) and a slower consumer (the upload): memory stays at one read buffer, and the
 * producer is never held back by the consumer.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';

/** Bytes per read. */
const READ_CHUNK = 256 * 1024;

/** Follows one file being written. */
export class FileFollower {
  #written = 0;
  #total: number | undefined;
  #failed: Error | undefined;
  #wake: (() => void) | undefined;

  constructor(private readonly path: string) {}

  /** The writer wrote `bytes` more (contiguous from the start of the file). */
  wrote(bytes: number): void {
    this.#written += bytes;
    this.#notify();
  }

  /** The writer is done: the file has `total` bytes. */
  end(total: number): void {
    this.#total = total;
    this.#notify();
  }

  /** The writer failed: the reader stops with `err`. */
  fail(err: Error): void {
    this.#failed = err;
    this.#notify();
  }

  /** The file's bytes, in order, as they are written; ends after the total. */
  stream(): Readable {
    return Readable.from(this.#chunks(), { objectMode: false, highWaterMark: READ_CHUNK });
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  async *#chunks(): AsyncGenerator<Buffer> {
    let handle: FileHandle | undefined;
    try {
      handle = await open(this.path, 'r');
      let offset = 0;
      for (;;) {
        if (this.#failed) throw this.#failed;
        const limit = this.#total ?? this.#written;
        if (offset < limit) {
          // A fresh buffer per read: the consumer keeps chunks (compression, part buffers).
          const buf = Buffer.allocUnsafe(Math.min(READ_CHUNK, limit - offset));
          const { bytesRead } = await handle.read(buf, 0, buf.length, offset);
          if (bytesRead === 0) throw new Error(`${this.path}: ended at ${offset} bytes, ${limit} were written`);
          offset += bytesRead;
          yield bytesRead === buf.length ? buf : buf.subarray(0, bytesRead);
          continue;
        }
        if (this.#total !== undefined) return;
        await new Promise<void>((resolve) => (this.#wake = resolve));
      }
    } finally {
      await handle?.close();
    }
  }
}

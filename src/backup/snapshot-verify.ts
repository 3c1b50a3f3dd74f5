/**
 * Verifies an etcd snapshot file the way etcd's restore and `etcdutl snapshot status` do: a snapshot
 * from the Maintenance.Snapshot RPC is the bbolt database followed by a 32-byte SHA-256 of it (etcd
 * checks `size % 512 == 32` and the digest before restoring); the database must open (a valid meta page)
 * and its buckets walk cleanly. One SHA-256 pass ({@link SnapshotDigest}) yields both the trailer check
 * and the file's own digest for the `.sha256` sidecar; memory stays at one buffer whatever the size.
 */
import { createHash } from 'node:crypto';
import { readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { BoltFormatError, PAGE_HEADER_SIZE, readBoltStats, readMeta, type PageReader } from './bbolt-format.ts';

/** Length of etcd's SHA-256 trailer. */
export const SNAPSHOT_TRAILER_SIZE = 32;
const CHUNK = 1 << 20;

/** What a verified snapshot holds. */
export interface SnapshotReport {
  /** File size in bytes (database + trailer). */
  readonly size: number;
  /** SHA-256 of the whole file, hex (what the sidecar records). */
  readonly sha256: string;
  /** The newest etcd revision in the snapshot. */
  readonly revision: number;
  /** Entries over all buckets (`etcdutl snapshot status` "total keys"). */
  readonly totalKeys: number;
  /** bbolt page size. */
  readonly pageSize: number;
}

/** The file is not a sound etcd snapshot; the message says why. */
export class SnapshotInvalidError extends Error {
  constructor(path: string, reason: string, options?: ErrorOptions) {
    super(`${path}: not a valid etcd snapshot: ${reason}`, options);
    this.name = 'SnapshotInvalidError';
  }
}

/** Result of a {@link SnapshotDigest}. */
export interface SnapshotDigestResult {
  /** Bytes seen. */
  readonly size: number;
  /** SHA-256 of all bytes, hex (the sidecar's). */
  readonly sha256: string;
  /** Whether the last 32 bytes are the SHA-256 of the bytes before them (etcd's trailer). */
  readonly trailerMatches: boolean;
}

/**
 * Both digests a snapshot needs in one SHA-256 pass: the bytes before a trailing 32-byte window are
 * hashed as they come; at the end a copy of that state gives the database's digest (to compare with the
 * window, etcd's trailer) and the same state continued over the window gives the whole file's.
 */
export class SnapshotDigest {
  readonly #hash = createHash('sha256');
  #tail = Buffer.alloc(0);
  #size = 0;

  /** Feeds the next bytes. */
  update(chunk: Buffer): void {
    this.#size += chunk.length;
    if (chunk.length < SNAPSHOT_TRAILER_SIZE) {
      const joined = Buffer.concat([this.#tail, chunk]);
      const cut = Math.max(0, joined.length - SNAPSHOT_TRAILER_SIZE);
      this.#hash.update(joined.subarray(0, cut));
      this.#tail = joined.subarray(cut);
      return;
    }
    // No concatenation of whole chunks: every copy of the stream is garbage for the GC to find.
    this.#hash.update(this.#tail);
    this.#hash.update(chunk.subarray(0, chunk.length - SNAPSHOT_TRAILER_SIZE));
    // A copy: the caller may reuse its buffer.
    this.#tail = Buffer.from(chunk.subarray(chunk.length - SNAPSHOT_TRAILER_SIZE));
  }

  /** Ends the pass. */
  digest(): SnapshotDigestResult {
    const db = this.#hash.copy().digest();
    this.#hash.update(this.#tail);
    return { size: this.#size, sha256: this.#hash.digest('hex'), trailerMatches: this.#tail.length === SNAPSHOT_TRAILER_SIZE && db.equals(this.#tail) };
  }
}

async function digestFile(handle: FileHandle, size: number): Promise<SnapshotDigestResult> {
  const digest = new SnapshotDigest();
  const buf = Buffer.allocUnsafe(CHUNK);
  for (let offset = 0; offset < size; ) {
    const { bytesRead } = await handle.read(buf, 0, Math.min(CHUNK, size - offset), offset);
    if (bytesRead === 0) break;
    digest.update(buf.subarray(0, bytesRead));
    offset += bytesRead;
  }
  return digest.digest();
}

/**
 * Verifies `path`; resolves with its figures or rejects with {@link SnapshotInvalidError}. `digested`
 * is what a {@link SnapshotDigest} computed over the very bytes written (the runner hashes while it
 * streams: reading the file back right after writing it would only read the page cache); without it the
 * file is read and hashed here (`backup verify`).
 */
export async function verifySnapshot(path: string, digested?: SnapshotDigestResult): Promise<SnapshotReport> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    const dbSize = size - SNAPSHOT_TRAILER_SIZE;
    if (size % 512 !== SNAPSHOT_TRAILER_SIZE || dbSize < 2 * 512) {
      throw new SnapshotInvalidError(path, `size ${size} is not a bbolt database plus etcd's 32-byte SHA-256 trailer (size % 512 must be 32): truncated or not from Maintenance.Snapshot`);
    }
    if (digested !== undefined && digested.size !== size) throw new SnapshotInvalidError(path, `${digested.size} bytes were written but the file has ${size}`);
    const head = Buffer.alloc(Math.min(dbSize, 65536 * 2));
    await handle.read(head, 0, head.length, 0);
    const meta = readMeta(head);
    if (meta === undefined) throw new SnapshotInvalidError(path, 'no valid bbolt meta page (bad magic, version or checksum)');
    if (BigInt(dbSize) < meta.pageCount * BigInt(meta.pageSize)) {
      throw new SnapshotInvalidError(path, `database is ${dbSize} bytes but its meta page counts ${meta.pageCount} pages of ${meta.pageSize}: truncated`);
    }
    const digest = digested ?? (await digestFile(handle, size));
    if (!digest.trailerMatches) throw new SnapshotInvalidError(path, 'the SHA-256 trailer does not match the database: corrupted in transit or on disk');

    // Synchronous positioned reads: a walk of a large database reads tens of thousands of page headers
    // from the page cache, where a thread-pool round trip per read would cost more than the read.
    const { fd } = handle;
    const read: PageReader = (pgid, headerOnly) => {
      const position = Number(pgid) * meta.pageSize;
      const header = Buffer.alloc(PAGE_HEADER_SIZE);
      readSync(fd, header, 0, PAGE_HEADER_SIZE, position);
      if (header.readBigUInt64LE(0) !== pgid) throw new BoltFormatError(`page ${pgid} carries id ${header.readBigUInt64LE(0)}`);
      if (headerOnly) return Promise.resolve(header);
      const length = (header.readUInt32LE(12) + 1) * meta.pageSize;
      if (position + length > dbSize) throw new BoltFormatError(`page ${pgid} (${length} bytes) runs past the end of the database`);
      const page = Buffer.alloc(length);
      readSync(fd, page, 0, length, position);
      return Promise.resolve(page);
    };
    let stats;
    try {
      stats = await readBoltStats(meta, read);
    } catch (err) {
      if (err instanceof BoltFormatError) throw new SnapshotInvalidError(path, err.message, { cause: err });
      throw err;
    }
    return { size, sha256: digest.sha256, revision: stats.revision, totalKeys: stats.totalKeys, pageSize: meta.pageSize };
  } finally {
    await handle.close();
  }
}

/**
 * What "verified" means to retention in a destination directory: the cheap checks run on every backup
 * of the schedule on every run, before {@link planRetention} counts it. A backup that fails one is not
 * counted and not deleted; the runner logs a warning naming it and the reason.
 *
 * The checks read the sidecar and at most the first 128 KiB and the last 8 bytes of each backup, never
 * the whole file: a schedule keeping 7 daily, 4 weekly and 6 monthly archives of a 50 GiB volume would
 * otherwise read 850 GiB on every run (docs/conversion-and-retention.md has the measurements). What
 * they prove:
 * - a regular file (not a directory or a symlink) with a `.sha256` sidecar that is a `sha256sum` line
 *   for this very name: the runner writes the sidecar only after the backup was verified and renamed
 *   into place, so a sidecar means a run finished it (a file copied or made by hand has none);
 * - etcd snapshot: `size % 512 == 32` (a bbolt database plus etcd's 32-byte trailer, what etcd checks
 *   before a restore), a valid bbolt meta page (magic, version, FNV checksum), and a size that holds
 *   every page the meta page counts: a truncated or garbage file fails;
 * - volume archive: a gzip header (magic, deflate, no reserved flag) and a gzip trailer whose
 *   uncompressed length is a whole number of 512-byte tar blocks: a truncated file (the trailer is then
 *   compressed data) fails in all but 1 case of 512.
 * - encrypted backup (`.age`; the runner holds no identity, so the content cannot be read): the file
 *   starts with age's `age-encryption.org/v1` line, its header ends (the `---` MAC line) within the
 *   first 64 KiB, and the size after header and 16-byte nonce is whole STREAM chunks (64 KiB + 16-byte
 *   tag each) plus a last one of at least its tag: garbage and most truncations fail. Not checked
 *   without the identity: the header MAC, the chunks' tags, and what the plaintext is (bbolt, tar).
 * Bit rot inside a file of the right shape is not seen here: `backup verify` and `backup list` read
 * every byte and compare the sidecar's digest (`backup verify --identity` also decrypts and checks it).
 */
import { lstat, open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readMeta } from './bbolt-format.ts';
import { parseBackupName, SIDECAR_SUFFIX, type BackupKind } from './backup-names.ts';
import { AGE_CHUNK, AGE_MAGIC, AGE_NONCE, AGE_TAG } from './pipeline/age-format.ts';
import { directoryCandidates, type RetentionCandidate } from './retention.ts';
import { parseSidecar } from './sidecar.ts';
import { SNAPSHOT_TRAILER_SIZE } from './snapshot-verify.ts';

/** Bytes read from the start of a snapshot: two meta pages of the largest page size bbolt uses. */
const SNAPSHOT_HEAD = 2 * 65_536;
/** A sidecar is one line of 64 hex digits, two spaces and a file name: anything larger is not one. */
const MAX_SIDECAR = 4_096;
const GZIP_MAGIC = [0x1f, 0x8b] as const;
const GZIP_DEFLATE = 8;
/** FLG bits 5–7 are reserved and must be zero (RFC 1952 2.3.1). */
const GZIP_RESERVED_FLAGS = 0xe0;
/** The smallest gzip member: a 10-byte header, an empty deflate block (2 bytes), the 8-byte trailer. */
const GZIP_MIN = 20;
const TAR_BLOCK = 512;

async function readAt(path: string, length: number, position: number): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, position);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** Bytes searched for the end of an age header (a few hundred bytes per recipient). */
const AGE_HEAD = 65_536;

async function encryptedProblem(path: string, size: number): Promise<string | undefined> {
  const head = await readAt(path, Math.min(size, AGE_HEAD), 0);
  if (!head.subarray(0, AGE_MAGIC.length).equals(AGE_MAGIC)) return 'no age header (the first line is not "age-encryption.org/v1")';
  const macLine = head.indexOf('\n---');
  const end = macLine < 0 ? -1 : head.indexOf('\n', macLine + 1);
  if (end < 0) return `the age header does not end (no "---" line) within its first ${AGE_HEAD} bytes`;
  const payload = size - (end + 1) - AGE_NONCE;
  // STREAM: full chunks of 64 KiB + tag, then a last chunk holding at least its tag.
  const last = payload % (AGE_CHUNK + AGE_TAG);
  if (payload < AGE_TAG || (last !== 0 && last < AGE_TAG)) return `size ${size} is not an age header, nonce and whole STREAM chunks: truncated`;
  return undefined;
}

async function snapshotProblem(path: string, size: number): Promise<string | undefined> {
  const dbSize = size - SNAPSHOT_TRAILER_SIZE;
  if (size % TAR_BLOCK !== SNAPSHOT_TRAILER_SIZE || dbSize < 2 * TAR_BLOCK) return `size ${size} is not a bbolt database plus etcd's 32-byte trailer (size % 512 must be 32)`;
  const meta = readMeta(await readAt(path, Math.min(dbSize, SNAPSHOT_HEAD), 0));
  if (meta === undefined) return 'no valid bbolt meta page (bad magic, version or checksum)';
  if (BigInt(dbSize) < meta.pageCount * BigInt(meta.pageSize)) return `database is ${dbSize} bytes but its meta page counts ${meta.pageCount} pages of ${meta.pageSize}: truncated`;
  return undefined;
}

async function archiveProblem(path: string, size: number): Promise<string | undefined> {
  if (size < GZIP_MIN) return `size ${size} is smaller than any gzip file`;
  const head = await readAt(path, 4, 0);
  if (head[0] !== GZIP_MAGIC[0] || head[1] !== GZIP_MAGIC[1] || head[2] !== GZIP_DEFLATE || ((head[3] ?? 0) & GZIP_RESERVED_FLAGS) !== 0) return 'no gzip header';
  // ISIZE, the uncompressed length modulo 2^32 (a multiple of 512, so the remainder survives the modulo).
  const isize = (await readAt(path, 4, size - 4)).readUInt32LE(0);
  if (isize % TAR_BLOCK !== 0) return `the gzip trailer gives ${isize} uncompressed bytes, not whole 512-byte tar blocks: truncated or not a tar.gz`;
  return undefined;
}

/**
 * Why the backup `file` of `dir` is not counted by retention, or `undefined` when it passes the cheap
 * checks (see the file comment). I/O errors other than a missing file are thrown.
 */
export async function quickCheckBackup(dir: string, file: string, kind: BackupKind): Promise<string | undefined> {
  const path = join(dir, file);
  const stats = await lstat(path);
  if (!stats.isFile()) return 'not a regular file';
  let sidecar: string;
  try {
    const sidecarStats = await lstat(path + SIDECAR_SUFFIX);
    if (!sidecarStats.isFile() || sidecarStats.size > MAX_SIDECAR) return `${file}${SIDECAR_SUFFIX} is not a sha256sum line for it`;
    sidecar = await readFile(path + SIDECAR_SUFFIX, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return `no ${SIDECAR_SUFFIX} sidecar: a run did not finish it, or it was not written by the runner`;
    throw err;
  }
  if (parseSidecar(sidecar, file) === undefined) return `${file}${SIDECAR_SUFFIX} is not a sha256sum line for it`;
  if (parseBackupName(file)?.encrypted) return encryptedProblem(path, stats.size);
  return kind === 'etcd-snapshot' ? snapshotProblem(path, stats.size) : archiveProblem(path, stats.size);
}

/**
 * The candidates of {@link planRetention} in `dir` for `schedule` (its complete backups but
 * `justWritten`, each checked by {@link quickCheckBackup}). One at a time: a few small reads per backup.
 */
export async function directoryRetentionCandidates(dir: string, files: readonly string[], schedule: string, justWritten: string): Promise<RetentionCandidate[]> {
  const out: RetentionCandidate[] = [];
  for (const { kind, ...candidate } of directoryCandidates(files, schedule)) {
    if (candidate.name === justWritten) continue;
    let problem: string | undefined;
    try {
      problem = await quickCheckBackup(dir, candidate.name, kind);
    } catch (err) {
      // Gone since the listing (another tool deleted it): nothing to count or delete.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw err;
    }
    out.push(problem === undefined ? candidate : { ...candidate, problem });
  }
  return out;
}

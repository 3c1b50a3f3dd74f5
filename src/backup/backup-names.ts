/**
 * File names of backups: `<schedule>-<UTC yyyymmddThhmmssZ>.<db|tar.gz>`, an incomplete volume archive
 * as `<schedule>-<stamp>.incomplete.tar.gz`, a `.sha256` sidecar next to each, and the hidden names of
 * the runner's own temp and lock files. Pure: no file system here.
 *
 * An encrypted backup (`--age-recipient`) is named as in a bucket, one suffix per pipeline stage so
 * stock tools undo them right to left: `<schedule>-<stamp>[.incomplete].<db|tar>[.zst|.gz].age`
 * (`age -d -i key.txt X.db.zst.age | zstd -d > X.db`).
 */
import { formatStamp, STAMP_SOURCE, stampTime } from '../pure/backup-stamp.ts';
import { COMPRESSION_SUFFIX, type Compression } from './pipeline/compression.ts';


/** Extension of an etcd snapshot (a bbolt database plus etcd's SHA-256 trailer). */
export const SNAPSHOT_EXTENSION = 'db';
/** Extension of a volume archive. */
export const ARCHIVE_EXTENSION = 'tar.gz';
/** Marks an archive whose files changed while read: never counted as a backup by retention. */
export const INCOMPLETE_MARK = 'incomplete';
/** Suffix of the checksum sidecar (`sha256sum` format). */
export const SIDECAR_SUFFIX = '.sha256';

/** The kind of a backup file, from its extension. */
export type BackupKind = 'etcd-snapshot' | 'volume-archive';

/** A backup file name taken apart. */
export interface BackupName {
  /** The whole file name. */
  readonly file: string;
  /** The BackupSchedule name it belongs to. */
  readonly schedule: string;
  /** When the backup started, as epoch milliseconds (second precision). */
  readonly time: number;
  /** What the file holds. */
  readonly kind: BackupKind;
  /** An archive written while files changed (`.incomplete.tar.gz`): kept apart from the backups. */
  readonly incomplete: boolean;
  /** age-encrypted (`.age`): only the sidecar's digest can be checked without the identity. */
  readonly encrypted: boolean;
  /** The compression stage (`.db`: none, `.tar.gz`: gzip). */
  readonly compression: Compression;
}

/** How an encrypted backup's bytes were encoded (the suffixes after `.db`/`.tar`). */
export interface EncryptedEncoding {
  readonly compression: Compression;
}

const ANY_BACKUP = new RegExp(`^(.+)-${STAMP_SOURCE}(\\.${INCOMPLETE_MARK})?\\.(db|tar)(\\.gz|\\.zst)?(\\.age)?$`);

/** The extension of a kind. */
export function extensionOf(kind: BackupKind): string {
  return kind === 'etcd-snapshot' ? SNAPSHOT_EXTENSION : ARCHIVE_EXTENSION;
}

/** Suffix of an age-encrypted backup. */
export const AGE_SUFFIX = '.age';

/**
 * The final name of a backup of `schedule` started at `epochMs`; `incomplete` marks a torn archive;
 * `encrypted` gives the bucket's naming (`.db.zst.age`, `.tar.gz.age`, …).
 */
export function backupFileName(schedule: string, epochMs: number, kind: BackupKind, incomplete = false, encrypted?: EncryptedEncoding): string {
  const extension = encrypted ? `${kind === 'etcd-snapshot' ? 'db' : 'tar'}${COMPRESSION_SUFFIX[encrypted.compression]}${AGE_SUFFIX}` : extensionOf(kind);
  return `${schedule}-${formatStamp(epochMs)}.${incomplete ? `${INCOMPLETE_MARK}.` : ''}${extension}`;
}

/**
 * Parses a backup file name; `undefined` for anything else (sidecars, temp files, foreign files).
 * The schedule part is greedy, so `a-b-20261130T020007Z.db` belongs to schedule `a-b`, never to `a`.
 */
export function parseBackupName(file: string): BackupName | undefined {
  const match = ANY_BACKUP.exec(file);
  if (!match) return undefined;
  const [, schedule, stamp, mark, ext, comp, age] = match as unknown as [string, string, string, string | undefined, string, string | undefined, string | undefined];
  // Unencrypted, the runner writes only `.db` and `.tar.gz`; any compression goes with `.age`.
  if (age === undefined && (ext === 'db' ? comp !== undefined : comp !== '.gz')) return undefined;
  const compression: Compression = comp === '.zst' ? 'zstd' : comp === '.gz' ? 'gzip' : 'none';
  const time = stampTime(stamp);
  if (time === undefined) return undefined;
  return { file, schedule, time, kind: ext === SNAPSHOT_EXTENSION ? 'etcd-snapshot' : 'volume-archive', incomplete: mark !== undefined, encrypted: age !== undefined, compression };
}

/** Name of the lock file that keeps two runs of one schedule from writing at once. */
export function lockFileName(schedule: string): string {
  return `.${schedule}.lock`;
}

/** Prefix of this schedule's temp files: hidden, so `backup list` and other schedules never see them. */
export function tempFilePrefix(schedule: string): string {
  return `.${schedule}.partial-`;
}

/** Hex digits after the temp prefix (TempFile.create appends 6 random bytes). */
const TEMP_SUFFIX = /^[0-9a-f]{12}$/;

/**
 * Whether `file` is one of `schedule`'s own temp files: the exact prefix and a 12-hex-digit suffix.
 * A prefix test alone would claim `.<schedule>.partial-x.lock` and `.<schedule>.partial-x.partial-…`,
 * the lock and temp files of schedule `<schedule>.partial-x` (a valid name).
 */
export function isTempFileOf(schedule: string, file: string): boolean {
  const prefix = tempFilePrefix(schedule);
  return file.startsWith(prefix) && TEMP_SUFFIX.test(file.slice(prefix.length));
}

/**
 * Names of backups in a bucket: `<prefix>/<schedule>-<UTC yyyymmddThhmmssZ>.<db|tar>[.<gz|zst>][.age]`,
 * each suffix one stage of the pipeline in order, so stock tools undo them right to left
 * (`age -d -i key.txt X.db.zst.age | zstd -d > X.db`), and a `<name>.sha256` sidecar object in
 * `sha256sum` format over the object's bytes. Pure: no network here.
 */
import { formatStamp, STAMP_SOURCE, stampTime } from '../../pure/backup-stamp.ts';
import type { BackupKind } from '../backup-names.ts';

import { COMPRESSION_SUFFIX, type Compression } from '../pipeline/compression.ts';

export { COMPRESSION_SUFFIX, type Compression } from '../pipeline/compression.ts';
/** Suffix of an age-encrypted object. */
export const AGE_SUFFIX = '.age';
/** Suffix of the checksum sidecar object. */
export const OBJECT_SIDECAR_SUFFIX = '.sha256';

/** A backup object's name (the part after the prefix) taken apart. */
export interface ObjectBackupName {
  /** The whole name, without the prefix. */
  readonly name: string;
  readonly schedule: string;
  /** Start time, epoch milliseconds (second precision). */
  readonly time: number;
  readonly kind: BackupKind;
  readonly compression: Compression;
  readonly encrypted: boolean;
  /** A volume archive whose files changed while read (`.incomplete.tar…`): never counted by retention. */
  readonly incomplete: boolean;
}

const NAME = new RegExp(`^(.+)-${STAMP_SOURCE}(\\.incomplete)?\\.(db|tar)(\\.gz|\\.zst)?(\\.age)?$`);

/** The object name of a backup of `schedule` started at `epochMs`; `incomplete` marks a torn volume archive. */
export function objectBackupName(schedule: string, epochMs: number, kind: BackupKind, compression: Compression, encrypted: boolean, incomplete = false): string {
  return `${schedule}-${formatStamp(epochMs)}.${incomplete ? 'incomplete.' : ''}${kind === 'etcd-snapshot' ? 'db' : 'tar'}${COMPRESSION_SUFFIX[compression]}${encrypted ? AGE_SUFFIX : ''}`;
}

/**
 * Parses an object name (without prefix); `undefined` for sidecars and foreign objects. The schedule
 * part is greedy, as for files: `a-b-20261130T020007Z.db` is schedule `a-b`'s.
 */
export function parseObjectBackupName(name: string): ObjectBackupName | undefined {
  const m = NAME.exec(name);
  if (!m) return undefined;
  const [, schedule, stamp, mark, ext, comp, age] = m as unknown as [string, string, string, string | undefined, string, string | undefined, string | undefined];
  // Only a volume archive can be torn.
  if (mark !== undefined && ext !== 'tar') return undefined;
  const time = stampTime(stamp);
  if (time === undefined) return undefined;
  return { name, schedule, time, kind: ext === 'db' ? 'etcd-snapshot' : 'volume-archive', compression: comp === '.zst' ? 'zstd' : comp === '.gz' ? 'gzip' : 'none', encrypted: age !== undefined, incomplete: mark !== undefined };
}

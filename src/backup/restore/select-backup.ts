/**
 * Finds the backup a restore takes in a backup directory and verifies it before anything is written:
 * the `.sha256` sidecar must exist and match, and the format must check out (an etcd snapshot's trailer
 * and bbolt structure; an archive read end to end through gzip and the strict tar reader, every entry's
 * path passing {@link EntryPlan}). `latest` is the newest backup that verifies, never an `.incomplete`
 * archive unless allowed; the ones skipped on the way are reported with the reason.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { verifyArchive } from '../archive-verify.ts';
import { backupDirNames, skippedMessage } from '../backup-dir.ts';
import { parseBackupName, SIDECAR_SUFFIX, type BackupName } from '../backup-names.ts';
import { parseSidecar } from '../sidecar.ts';
import { verifySnapshot } from '../snapshot-verify.ts';
import { EntryPlan } from './entry-paths.ts';

/** The restore is refused before anything was written (exit code 5): no such backup, or it does not verify. */
export class RestoreRefusedError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'RestoreRefusedError';
  }
}

/** A backup that verified. */
export interface VerifiedBackup {
  readonly path: string;
  readonly name: BackupName;
  readonly size: number;
  readonly sha256: string;
}

/** What to pick. */
export interface Selection {
  /** A backup file name, or `latest`. */
  readonly backup: string;
  /** Only this schedule's backups count for `latest`. @default all in the directory */
  readonly schedule?: string | undefined;
  /** An `.incomplete.tar.gz` archive may be taken. */
  readonly allowIncomplete: boolean;
}

/** Verifies one backup file against its sidecar and its format; throws {@link RestoreRefusedError}. */
export async function verifyForRestore(dir: string, name: BackupName): Promise<VerifiedBackup> {
  const path = join(dir, name.file);
  let recorded: string | undefined;
  try {
    recorded = parseSidecar(await readFile(path + SIDECAR_SUFFIX, 'utf8'), name.file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    throw new RestoreRefusedError(`${name.file}: no ${SIDECAR_SUFFIX} sidecar, so the backup cannot be verified`);
  }
  if (recorded === undefined) throw new RestoreRefusedError(`${name.file}${SIDECAR_SUFFIX}: not a sha256sum line for ${name.file}`);
  let figures: { size: number; sha256: string };
  try {
    figures = name.kind === 'etcd-snapshot' ? await verifySnapshot(path) : await verifyArchive(path, { sink: new EntryPlan() });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new RestoreRefusedError(`${name.file}: no such backup in ${dir}`, { cause: err });
    throw new RestoreRefusedError((err as Error).message, { cause: err });
  }
  if (figures.sha256 !== recorded) throw new RestoreRefusedError(`${name.file}: SHA-256 ${figures.sha256} differs from the sidecar's ${recorded}`);
  return { path, name, size: figures.size, sha256: figures.sha256 };
}

/** The backup `selection` names in `dir`, verified; `onSkip` hears why newer ones were passed over. */
export async function selectBackup(dir: string, selection: Selection, onSkip: (message: string) => void): Promise<VerifiedBackup> {
  if (selection.backup !== 'latest') {
    const name = parseBackupName(selection.backup);
    if (!name) throw new RestoreRefusedError(`--backup: ${JSON.stringify(selection.backup)} is not a backup file name (<schedule>-<yyyymmddThhmmssZ>.db, .tar.gz or .incomplete.tar.gz) nor latest`);
    if (name.incomplete && !selection.allowIncomplete) throw new RestoreRefusedError(`${name.file} is an incomplete archive (files changed while it was written): restore it only with --allow-incomplete`);
    return verifyForRestore(dir, name);
  }
  const candidates = (await backupDirNames(dir, (entry) => onSkip(skippedMessage(entry))))
    .map(parseBackupName)
    .filter((name): name is BackupName => name !== undefined && (selection.schedule === undefined || name.schedule === selection.schedule))
    .filter((name) => selection.allowIncomplete || !name.incomplete)
    // Newest first; at the same second a complete archive before an incomplete one.
    .sort((a, b) => b.time - a.time || Number(a.incomplete) - Number(b.incomplete));
  let newest: string | undefined;
  for (const name of candidates) {
    try {
      return await verifyForRestore(dir, name);
    } catch (err) {
      if (!(err instanceof RestoreRefusedError)) throw err;
      newest ??= err.message;
      onSkip(`${err.message}: skipped, trying an older backup`);
    }
  }
  const whose = selection.schedule === undefined ? '' : ` of schedule ${selection.schedule}`;
  const tried = newest === undefined ? ' (there is none)' : ` (${candidates.length} tried; the newest: ${newest})`;
  throw new RestoreRefusedError(`no backup${whose} in ${dir} verifies${tried}${selection.allowIncomplete ? '' : '; incomplete archives are not considered without --allow-incomplete'}`);
}

/**
 * A restore's backup from an object store: picked (a named object, or `latest`: the newest object of
 * the schedule that has its sidecar, never `.incomplete` unless allowed), then downloaded, decrypted,
 * decompressed and checked by the object-store module's own `fetchObject` (SHA-256 against the
 * sidecar, the snapshot's structure or the tar stream) into a hidden staging file, which the local
 * restore then takes as it takes a file from a backup directory. Nothing is written to the target
 * before the staged file verified; the staging file is the caller's to remove.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { backupFileName, type BackupKind } from '../backup-names.ts';
import type { S3Options } from '../object-store/s3-options.ts';
import { createS3Client } from '../object-store/s3-client.ts';
import { listBackupObjects } from '../object-store/s3-bucket.ts';
import { parseObjectBackupName, type ObjectBackupName } from '../object-store/object-names.ts';
import { parseS3Url } from '../object-store/s3-location.ts';
import { fetchObject, readIdentities } from '../object-store/s3-tools.ts';
import { RestoreRefusedError, type Selection } from './select-backup.ts';

/** Where the backups are: the bucket and prefix, and how to reach them. */
export interface ObjectStoreSource {
  readonly url: string;
  readonly s3: S3Options;
  readonly identityFile: string | undefined;
}

/** A backup fetched and verified into a local plaintext file. */
export interface StagedBackup {
  /** The plaintext: an etcd snapshot (.db) or an uncompressed tar. */
  readonly path: string;
  readonly kind: BackupKind;
  /** The object's name. */
  readonly object: string;
  /** The local file name of the same backup (`<schedule>-<stamp>.db`): what a snapshot is restored as. */
  readonly fileName: string;
  readonly time: number;
  readonly size: number;
  readonly sha256: string;
}

/** Fetches the backup `selection` names into `stagingDir`; `onSkip` hears why newer ones were passed over. */
export async function fetchFromObjectStore(source: ObjectStoreSource, selection: Selection, stagingDir: string, env: Readonly<Record<string, string | undefined>>, onSkip: (message: string) => void): Promise<StagedBackup> {
  const location = parseS3Url(source.url, '--from');
  const identities = source.identityFile === undefined ? undefined : await readIdentities(source.identityFile);
  const client = createS3Client(source.s3, env);
  try {
    let candidates: ObjectBackupName[];
    if (selection.backup !== 'latest') {
      const name = parseObjectBackupName(selection.backup);
      if (!name) throw new RestoreRefusedError(`--backup: ${JSON.stringify(selection.backup)} is not a backup object name (<schedule>-<yyyymmddThhmmssZ>.<db|tar>[.zst|.gz][.age]) nor latest`);
      if (name.incomplete && !selection.allowIncomplete) throw new RestoreRefusedError(`${name.name} is an incomplete archive (files changed while it was written): restore it only with --allow-incomplete`);
      candidates = [name];
    } else {
      const listed = await listBackupObjects(client, location, selection.schedule);
      for (const o of listed) if (!o.sidecar) onSkip(`${o.name}: no .sha256 sidecar (its run did not finish): skipped`);
      candidates = listed.filter((o) => o.sidecar && (selection.allowIncomplete || !o.incomplete)).sort((a, b) => b.time - a.time || Number(a.incomplete) - Number(b.incomplete));
    }
    let newest: string | undefined;
    for (const name of candidates) {
      const path = join(stagingDir, `.restore-${randomBytes(6).toString('hex')}.${name.kind === 'etcd-snapshot' ? 'db' : 'tar'}`);
      const url = `s3://${location.bucket}/${location.prefix === '' ? '' : `${location.prefix}/`}${name.name}`;
      let result;
      try {
        result = await fetchObject(client, url, identities, path);
      } catch (err) {
        // Unreadable (missing, forbidden, encrypted without an identity): nothing was written.
        result = { ok: false, problem: (err as Error).message, sha256: undefined, size: 0 };
      }
      if (result.ok && result.sha256 !== undefined) {
        return { path, kind: name.kind, object: name.name, fileName: backupFileName(name.schedule, name.time, name.kind, name.incomplete), time: name.time, size: result.size, sha256: result.sha256 };
      }
      const problem = `${name.name}: ${result.problem ?? 'does not verify'}`;
      if (selection.backup !== 'latest') throw new RestoreRefusedError(problem);
      newest ??= problem;
      onSkip(`${problem}: skipped, trying an older backup`);
    }
    const whose = selection.schedule === undefined ? '' : ` of schedule ${selection.schedule}`;
    throw new RestoreRefusedError(`no backup${whose} in ${source.url} verifies${newest === undefined ? ' (there is none with its sidecar)' : ` (the newest: ${newest})`}${selection.allowIncomplete ? '' : '; incomplete archives are not considered without --allow-incomplete'}`);
  } finally {
    client.destroy();
  }
}

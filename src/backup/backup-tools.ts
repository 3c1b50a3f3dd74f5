/**
 * The on-call tools of the image: `backup verify <file>` and `backup list <dir>`, what one reaches for
 * before a restore. Both check the format (etcd snapshot trailer + bbolt structure, or a full gzip/tar
 * read) and the `.sha256` sidecar when there is one.
 */
import { readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { verifyArchive } from './archive-verify.ts';
import { backupDirNames, skippedMessage } from './backup-dir.ts';
import { parseBackupName, SIDECAR_SUFFIX, type BackupKind } from './backup-names.ts';
import { parseSidecar } from './sidecar.ts';
import { verifySnapshot } from './snapshot-verify.ts';

/** Result of {@link verifyBackupFile}. */
export interface Verification {
  readonly file: string;
  readonly kind: BackupKind;
  readonly size: number;
  /** Whether the format is valid and the `.sha256` sidecar exists and matches. */
  readonly ok: boolean;
  /** Why not, when not ok. */
  readonly problem?: string;
  readonly sha256?: string;
  /** The `.sha256` sidecar: only `matches` is ok. */
  readonly sidecar: 'matches' | 'missing' | 'mismatch' | 'malformed';
  /** Snapshot figures (etcd snapshots only). */
  readonly revision?: number;
  readonly totalKeys?: number;
  /** Tar entries (archives only). */
  readonly entries?: number;
  /** Encrypted (`.age`) files: whether the content was decrypted and checked (only with `--identity`). */
  readonly content?: 'checked' | 'not checked: encrypted, no --identity';
}

/** The kind of a file from its name (`.db` or `.tar.gz`). */
export function kindOf(path: string): BackupKind | undefined {
  const parsed = parseBackupName(basename(path));
  if (parsed) return parsed.kind;
  if (path.endsWith('.db')) return 'etcd-snapshot';
  if (path.endsWith('.tar.gz') || path.endsWith('.tgz')) return 'volume-archive';
  return undefined;
}

/**
 * Verifies one backup file. Never throws for a bad file: `ok: false` and a `problem` say why. An
 * encrypted one (`.age`) is checked against its sidecar only, unless `identities` let it be decrypted.
 */
export async function verifyBackupFile(path: string, identities?: readonly string[]): Promise<Verification> {
  const kind = kindOf(path);
  const file = basename(path);
  if (kind === undefined) throw new Error(`${path}: not a backup file name (expected <schedule>-<yyyymmddThhmmssZ>.db, .tar.gz, .incomplete.tar.gz or, encrypted, .<db|tar>[.zst|.gz].age)`);
  const size = (await stat(path)).size;
  let sidecar: Verification['sidecar'] = 'missing';
  let recorded: string | undefined;
  try {
    recorded = parseSidecar(await readFile(path + SIDECAR_SUFFIX, 'utf8'), file);
    sidecar = recorded === undefined ? 'malformed' : 'matches';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const parsed = parseBackupName(file);
  if (parsed?.encrypted) {
    let checked;
    try {
      // Loaded only for encrypted files: age-encryption stays out of the runner's memory otherwise.
      checked = await (await import('./encrypted-verify.ts')).checkEncryptedFile(path, parsed, identities);
    } catch (err) {
      return { file, kind, size, ok: false, sidecar, problem: (err as Error).message };
    }
    const { sha256, content, problem, ...details } = checked;
    const base = { file, kind, size, sha256, content, ...details };
    if (recorded !== undefined && recorded !== sha256) return { ...base, ok: false, sidecar: 'mismatch', problem: `SHA-256 ${sha256} differs from the sidecar's ${recorded}` };
    if (problem !== undefined) return { ...base, ok: false, sidecar, problem };
    if (sidecar !== 'matches') return { ...base, ok: false, sidecar, problem: sidecar === 'missing' ? `no ${file}${SIDECAR_SUFFIX} sidecar: nothing records the SHA-256 the runner wrote (its run did not finish, or the file was copied without it)` : `${file}${SIDECAR_SUFFIX} is not a sha256sum line for ${file}` };
    return { ...base, ok: true, sidecar };
  }
  try {
    const figures = kind === 'etcd-snapshot' ? await verifySnapshot(path) : await verifyArchive(path);
    const details = 'revision' in figures ? { revision: figures.revision, totalKeys: figures.totalKeys } : { entries: figures.entries };
    if (recorded !== undefined && recorded !== figures.sha256) {
      return { file, kind, size, ok: false, sidecar: 'mismatch', sha256: figures.sha256, problem: `SHA-256 ${figures.sha256} differs from the sidecar's ${recorded}`, ...details };
    }
    if (sidecar === 'malformed') return { file, kind, size, ok: false, sidecar, sha256: figures.sha256, problem: `${file}${SIDECAR_SUFFIX} is not a sha256sum line for ${file}`, ...details };
    // The runner writes the sidecar right after the backup: without it, the run did not finish (or the
    // file was copied without it) and nothing says these are the bytes the runner verified.
    if (sidecar === 'missing') return { file, kind, size, ok: false, sidecar, sha256: figures.sha256, problem: `no ${file}${SIDECAR_SUFFIX} sidecar: the format is valid, but nothing records the SHA-256 the runner wrote (its run did not finish, or the file was copied without it)`, ...details };
    return { file, kind, size, ok: true, sidecar, sha256: figures.sha256, ...details };
  } catch (err) {
    return { file, kind, size, ok: false, sidecar, problem: (err as Error).message };
  }
}

/** One row of `backup list`. */
export interface ListedBackup {
  readonly file: string;
  readonly schedule: string;
  /** Start time encoded in the name, ISO 8601 UTC. */
  readonly time: string;
  readonly size: number;
  /** Written while files changed (`.incomplete.tar.gz`): not a complete backup, not counted by retention. */
  readonly incomplete: boolean;
  readonly verification: Verification;
}

/** Every backup file in `dir` (any schedule), oldest first per schedule, each verified; `onSkip` hears of a directory or other non-file named like a backup. */
export async function listBackups(dir: string, onSkip: (message: string) => void = () => undefined): Promise<ListedBackup[]> {
  const names = (await backupDirNames(dir, (e) => onSkip(skippedMessage(e)))).map(parseBackupName).filter((n) => n !== undefined);
  names.sort((a, b) => (a.schedule === b.schedule ? a.time - b.time : a.schedule < b.schedule ? -1 : 1));
  const rows: ListedBackup[] = [];
  // One at a time: each verification reads a whole file, in parallel they would only thrash the disk.
  for (const name of names) {
    const verification = await verifyBackupFile(join(dir, name.file));
    rows.push({ file: name.file, schedule: name.schedule, time: new Date(name.time).toISOString(), size: verification.size, incomplete: name.incomplete, verification });
  }
  return rows;
}

/** `backup list` as a text table: NAME, TIME, SIZE, COMPLETE, VERIFIED. */
export function formatList(rows: readonly ListedBackup[]): string {
  const table = [['NAME', 'TIME', 'SIZE', 'COMPLETE', 'VERIFIED']];
  for (const row of rows) {
    const v = row.verification;
    const verified = v.ok ? (v.content === 'not checked: encrypted, no --identity' ? 'yes (encrypted: SHA-256 against the sidecar only; backup verify --identity checks the content)' : 'yes') : `NO: ${v.problem ?? 'unknown'}`;
    table.push([row.file, row.time, String(row.size), row.incomplete ? 'NO (files changed while read)' : 'yes', verified]);
  }
  const widths = table[0]!.map((_, col) => Math.max(...table.map((r) => r[col]!.length)));
  return table.map((r) => r.map((cell, col) => (col === r.length - 1 ? cell : cell.padEnd(widths[col]!))).join('  ')).join('\n') + '\n';
}

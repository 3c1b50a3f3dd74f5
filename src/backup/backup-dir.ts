/**
 * The file names in a destination directory that may be backups: regular files only. A directory (or
 * FIFO, socket, symlink) that happens to carry a backup's name — `mkdir` by hand, a restore extracted
 * in place — is no backup: counted, it would take a retention slot; deleted, unlink fails (EISDIR) and
 * every run exits 4; verified, `list` fails. It is skipped, and the caller is told so it can warn.
 */
import { readdir } from 'node:fs/promises';
import { parseBackupName } from './backup-names.ts';

/** Why an entry named like a backup was skipped. */
export interface SkippedEntry {
  readonly name: string;
  /** 'a directory', 'a symbolic link', … */
  readonly what: string;
}

function describeDirent(d: { isDirectory(): boolean; isSymbolicLink(): boolean; isFIFO(): boolean; isSocket(): boolean }): string {
  if (d.isDirectory()) return 'a directory';
  if (d.isSymbolicLink()) return 'a symbolic link';
  if (d.isFIFO()) return 'a FIFO';
  if (d.isSocket()) return 'a socket';
  return 'a device';
}

/**
 * Every name in `dir` except entries named like a backup that are not regular files; those go to
 * `onSkip`. Other names (sidecars, temp files, foreign files) pass as they are: their readers decide.
 */
export async function backupDirNames(dir: string, onSkip: (entry: SkippedEntry) => void): Promise<string[]> {
  const names: string[] = [];
  for (const dirent of await readdir(dir, { withFileTypes: true })) {
    if (!dirent.isFile() && parseBackupName(dirent.name) !== undefined) onSkip({ name: dirent.name, what: describeDirent(dirent) });
    else names.push(dirent.name);
  }
  return names;
}

/** The warning for a skipped entry, one wording for the run's log and `backup list`. */
export function skippedMessage(entry: SkippedEntry): string {
  return `${entry.name} is ${entry.what}, not a backup file: skipped (not counted, not deleted, not verified)`;
}

/**
 * Archives for the restore tests: one made by the runner from a real directory, and hand-made hostile
 * ones (headers from the runner's own encoder, so every checksum is right and only the paths are bad).
 */
import { createWriteStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { gzipSync } from 'node:zlib';
import { archiveDirectory } from '../../../src/backup/volume-archive.ts';
import { encodeHeader, END_OF_ARCHIVE, padding, type TarEntry } from '../../../src/backup/tar-header.ts';
import { silentLogger } from '../../../src/runtime/logger.ts';
import { putVerified } from '../backup-fixtures.ts';

/** Archives `sourceDir` with the runner into `backupDir/file`, with its sidecar. */
export async function runnerArchive(sourceDir: string, backupDir: string, file: string): Promise<void> {
  const run = archiveDirectory({ sourceDir, logger: silentLogger });
  const path = join(backupDir, file);
  await pipeline(Readable.from(run.stream), createWriteStream(path));
  await run.result;
  putVerified(backupDir, file, readFileSync(path));
}

/** One entry of a hand-made archive, with its data. */
export type CraftedEntry = Partial<TarEntry> & { readonly name: string; readonly data?: string };

/** A tar.gz of `entries` (files by default, mode 0644, owner 0, mtime 2026-01-01). */
export function craftArchive(entries: readonly CraftedEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const data = Buffer.from(entry.data ?? '');
    parts.push(encodeHeader({ type: 'file', mode: 0o644, uid: 0, gid: 0, mtime: 1_767_225_600, ...entry, size: data.length }), data, padding(data.length));
  }
  parts.push(END_OF_ARCHIVE);
  return gzipSync(Buffer.concat(parts));
}

/**
 * Writes layer entries as files into a folder, owners, modes and times included (as root): the image's
 * file tree for the Dockerfile, whose last stage copies it onto `scratch`, and for tests that look at
 * the tree. Later entries of one path replace earlier ones, as a later layer does.
 */
import { chmodSync, copyFileSync, lchownSync, lutimesSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sortEntries, type LayerEntry } from './tar-layer.ts';

/** Writes `entries` under `dir`, every time stamp `mtime` (seconds). */
export function writeRootfs(entries: readonly LayerEntry[], dir: string, mtime: number): void {
  const byPath = new Map(entries.map((e) => [e.path, e]));
  const sorted = sortEntries([...byPath.values()]);
  mkdirSync(dir, { recursive: true });
  for (const entry of sorted) {
    const path = join(dir, entry.path);
    if (entry.type === 'directory') mkdirSync(path, { recursive: true });
    else {
      rmSync(path, { force: true });
      if (entry.type === 'symlink') symlinkSync(entry.linkname ?? '', path);
      else if (entry.data !== undefined && 'file' in entry.data) copyFileSync(entry.data.file, path);
      else writeFileSync(path, entry.data?.bytes ?? Buffer.alloc(0));
    }
    lchownSync(path, entry.uid, entry.gid);
    if (entry.type !== 'symlink') chmodSync(path, entry.mode);
  }
  // Times last, deepest first: writing into a folder changes its mtime.
  for (const entry of sorted.reverse()) lutimesSync(join(dir, entry.path), mtime, mtime);
  lutimesSync(dir, mtime, mtime);
}

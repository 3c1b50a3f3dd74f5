/**
 * Which archive entries a restore may write, decided from the archive alone (no file system), so a
 * hostile or damaged archive is refused in the verification pass, before anything is written. An entry
 * must stay inside the target directory: no absolute name, no `..` component, no path through a
 * symbolic link the archive itself created earlier (the classic "symlink `a -> /etc`, then file
 * `a/passwd`"), and a hard link only to a file the archive extracted before it (never to a path
 * outside or to a file that was in the target already). Symbolic link *targets* are data: a link may
 * point anywhere, as with GNU tar, because nothing is ever written through one.
 */
import type { EntryMetadata } from '../tar-header.ts';
import type { TarSink } from '../tar-reader.ts';

/** An entry would be written outside the target directory, or through a link; the restore is refused. */
export class UnsafeEntryError extends Error {
  constructor(name: string, reason: string) {
    super(`archive entry ${JSON.stringify(name)}: ${reason}; refusing to restore this archive`);
    this.name = 'UnsafeEntryError';
  }
}

/**
 * The path components of an archive name relative to the target (`.` and empty components dropped,
 * a directory's trailing `/` too); `[]` is the target itself. Throws {@link UnsafeEntryError} for an
 * absolute name, a `..` component or a NUL byte.
 */
export function entryComponents(name: string): string[] {
  if (name.includes('\0')) throw new UnsafeEntryError(name, 'the name holds a NUL byte');
  if (name.startsWith('/')) throw new UnsafeEntryError(name, 'absolute name: it would be written outside the target directory');
  const parts = name.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.includes('..')) throw new UnsafeEntryError(name, 'a ".." component: it would be written outside the target directory');
  return parts;
}

/** One entry as the extractor writes it: the metadata and its checked place. */
export interface PlannedEntry {
  readonly metadata: EntryMetadata;
  /** Components under the target ({@link entryComponents}). */
  readonly path: readonly string[];
  /** A hard link's target, as components under the target. */
  readonly linkPath?: readonly string[];
}

/**
 * Follows the archive entry by entry and refuses the first unsafe one. Used as the {@link TarSink}
 * of the verification pass, and again by the extractor for each entry it writes.
 */
export class EntryPlan implements TarSink {
  /** Paths (joined with '/') the archive made symbolic links, as long as no later entry replaced them. */
  readonly #symlinks = new Set<string>();
  /** Paths of non-directory entries so far: the only valid hard link targets. */
  readonly #files = new Set<string>();

  /** Checks `metadata`; returns where it goes. Throws {@link UnsafeEntryError}. */
  check(metadata: EntryMetadata): PlannedEntry {
    const path = entryComponents(metadata.name);
    if (path.length === 0 && metadata.type !== 'directory') throw new UnsafeEntryError(metadata.name, 'a non-directory entry names the target directory itself');
    this.#refuseThroughSymlink(metadata.name, path);
    let linkPath: string[] | undefined;
    if (metadata.type === 'link') {
      const target = metadata.linkname ?? '';
      linkPath = entryComponents(target);
      this.#refuseThroughSymlink(metadata.name, linkPath);
      if (!this.#files.has(linkPath.join('/'))) throw new UnsafeEntryError(metadata.name, `hard link to ${JSON.stringify(target)}, which is no file extracted earlier from this archive`);
    }
    const key = path.join('/');
    // The entry replaces whatever the path was: a symbolic link there is gone, descendants with it.
    for (const link of this.#symlinks) if (link === key || link.startsWith(`${key}/`)) this.#symlinks.delete(link);
    if (metadata.type === 'symlink') this.#symlinks.add(key);
    if (metadata.type === 'directory') this.#files.delete(key);
    else this.#files.add(key);
    return linkPath ? { metadata, path, linkPath } : { metadata, path };
  }

  /** {@link TarSink.entry}: check only. */
  entry(metadata: EntryMetadata): void {
    this.check(metadata);
  }

  /** {@link TarSink.data}: the data needs no check. */
  data(): void {}

  #refuseThroughSymlink(name: string, path: readonly string[]): void {
    for (let i = 1; i < path.length; i++) {
      const prefix = path.slice(0, i).join('/');
      if (this.#symlinks.has(prefix)) throw new UnsafeEntryError(name, `its parent ${JSON.stringify(prefix)} is a symbolic link from this archive: it would be written through the link`);
    }
  }
}

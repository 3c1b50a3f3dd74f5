/**
 * The files the CLI's path arguments stand for, read as `kubectl apply -R -f <folder>` reads a folder
 * (k8s.io/cli-runtime's resource visitor, filepath.Walk): every `.yaml`, `.yml` and `.json` file under
 * it, in lexical order; a symbolic link to a file is read like the file, and a symbolic link to a folder
 * is not descended into (Walk never follows them), so `loop -> .` cannot make the walk run forever. Such
 * links are listed as skipped, so nothing is left out silently.
 */
import { readdirSync, statSync, type Dirent } from 'node:fs';
import { extname, join } from 'node:path';
import { UsageError } from './io.ts';

/** The extensions kubectl reads from a folder. */
const MANIFEST_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

/** A path left out of the input, and why. */
export interface SkippedPath {
  readonly path: string;
  readonly reason: string;
}

/** What {@link expandPaths} found. */
export interface ExpandedPaths {
  /** The files to read, in order (`-` for standard input). */
  readonly files: readonly string[];
  /** Paths under a folder that were not read, each with its reason. */
  readonly skipped: readonly SkippedPath[];
}

/**
 * The files of `paths`: `-` and files as given (any name: a file named on the command line is read
 * whatever its extension, as kubectl does), folders walked. A path that does not exist is a UsageError.
 */
export function expandPaths(paths: readonly string[]): ExpandedPaths {
  const files: string[] = [];
  const skipped: SkippedPath[] = [];
  for (const path of paths) {
    if (path === '-') {
      files.push(path);
      continue;
    }
    const stat = statSync(path, { throwIfNoEntry: false });
    if (stat === undefined) throw new UsageError(`no such file or folder: ${path}`);
    if (stat.isDirectory()) walk(path, files, skipped);
    else files.push(path);
  }
  return { files, skipped };
}

/** Appends the manifest files under `folder` to `files`, depth first in lexical order, as filepath.Walk does. */
function walk(folder: string, files: string[], skipped: SkippedPath[]): void {
  let entries: Dirent[];
  try {
    entries = readdirSync(folder, { withFileTypes: true });
  } catch (error) {
    skipped.push({ path: folder, reason: `cannot read the folder: ${(error as NodeJS.ErrnoException).code ?? String(error)}` });
    return;
  }
  // Walk sorts by name, byte-wise; localeCompare would not.
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) {
      walk(path, files, skipped);
    } else if (entry.isSymbolicLink()) {
      const target = statSync(path, { throwIfNoEntry: false });
      if (target?.isDirectory() === true) skipped.push({ path, reason: 'a symbolic link to a folder: not followed (kubectl -R does not follow them either)' });
      // A dangling link is read too, and fails naming itself: it may be the manifest the user meant.
      else if (MANIFEST_EXTENSIONS.has(extname(entry.name))) files.push(path);
    } else if (MANIFEST_EXTENSIONS.has(extname(entry.name))) {
      // A FIFO or socket named like a manifest would block the walk's reader, or cannot be read at all.
      if (entry.isFile()) files.push(path);
      else skipped.push({ path, reason: 'not a regular file' });
    }
  }
}

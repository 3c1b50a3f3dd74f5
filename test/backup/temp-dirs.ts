/**
 * Temp directories of the backup unit tests, removed after each test (call {@link removeTempDirsAfterEach}
 * once per file), so repeated runs leave nothing behind in the OS temp directory.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';

const created: string[] = [];

/** A fresh directory `<tmp>/<prefix>XXXXXX`, removed after the current test. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  created.push(dir);
  return dir;
}

/** Registers the afterEach hook that removes every directory {@link tempDir} made. */
export function removeTempDirsAfterEach(): void {
  afterEach(() => {
    for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
}

/** A run's `source/` holding `file` (`size` bytes of `fill`) and an empty `dest/`, in a {@link tempDir}. */
export function sourceAndDestination(file: string, size: number, fill: number): { source: string; destination: string } {
  const root = tempDir('bks-run-');
  const source = join(root, 'source');
  const destination = join(root, 'dest');
  mkdirSync(source);
  mkdirSync(destination);
  writeFileSync(join(source, file), Buffer.alloc(size, fill));
  return { source, destination };
}

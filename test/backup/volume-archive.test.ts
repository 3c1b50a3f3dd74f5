import { closeSync, ftruncateSync, futimesSync, openSync, truncateSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { extract } from 'tar-stream';
import { describe, expect, it } from 'vitest';
import { archiveDirectory } from '../../src/backup/volume-archive.ts';
import { silentLogger } from '../../src/runtime/logger.ts';
import { removeTempDirsAfterEach, tempDir } from './temp-dirs.ts';

removeTempDirsAfterEach();

/** Runs the archive to the end; returns the result and the tar entries (name → content). */
async function archive(sourceDir: string, onBytes?: (n: number) => void): Promise<{ result: Awaited<ReturnType<typeof archiveDirectory>['result']>; entries: Map<string, Buffer> }> {
  const run = archiveDirectory({ sourceDir, logger: silentLogger, ...(onBytes ? { onBytes } : {}) });
  const entries = new Map<string, Buffer>();
  const parser = extract();
  parser.on('entry', (header, body, next) => {
    const chunks: Buffer[] = [];
    body.on('data', (c) => void chunks.push(c as Buffer));
    body.on('end', () => {
      entries.set(header.name, Buffer.concat(chunks));
      next();
    });
  });
  await pipeline(Readable.from(run.stream), createGunzip(), parser);
  return { result: await run.result, entries };
}

describe('archiveDirectory', () => {
  it('warns about a file that vanishes before it is read and archives the rest', async () => {
    const dir = tempDir('bks-arch-');
    writeFileSync(join(dir, 'a.bin'), Buffer.alloc(300_000, 1));
    writeFileSync(join(dir, 'b.txt'), 'doomed');
    writeFileSync(join(dir, 'c.txt'), 'kept');
    let deleted = false;
    const { result, entries } = await archive(dir, () => {
      if (!deleted) unlinkSync(join(dir, 'b.txt'));
      deleted = true;
    });
    expect(result.vanished).toEqual(['b.txt']);
    expect(result.changed).toEqual([]);
    expect([...entries.keys()]).toEqual(['a.bin', 'c.txt']);
  });

  it('marks a file that shrinks while read as changed and keeps the tar valid (declared size, zero padding)', async () => {
    const dir = tempDir('bks-arch-');
    writeFileSync(join(dir, 'grows-and-shrinks.db'), Buffer.alloc(1_000_000, 7));
    writeFileSync(join(dir, 'z.txt'), 'after');
    let cut = false;
    const { result, entries } = await archive(dir, () => {
      if (!cut) truncateSync(join(dir, 'grows-and-shrinks.db'), 1000);
      cut = true;
    });
    expect(result.changed).toEqual(['grows-and-shrinks.db']);
    expect(entries.get('grows-and-shrinks.db')).toHaveLength(1_000_000);
    expect(entries.get('z.txt')?.toString()).toBe('after');
  });

  it('marks a sparse file written into while read as changed (data landed in a hole after the scan)', async () => {
    const dir = tempDir('bks-arch-');
    const path = join(dir, 'disk.img');
    const fd = openSync(path, 'w');
    ftruncateSync(fd, 64 << 20);
    writeSync(fd, Buffer.alloc(600_000, 5), 0);
    closeSync(fd);
    let written = false;
    const { result, entries } = await archive(dir, () => {
      if (written) return;
      written = true;
      const again = openSync(path, 'r+');
      writeSync(again, 'late data', 32 << 20);
      // A coarse-mtime file system could keep the same mtime: make the change visible as the kernel would.
      futimesSync(again, new Date(), new Date(Date.now() + 5_000));
      closeSync(again);
    });
    expect(result.sparseFiles).toBe(1);
    expect(result.changed).toEqual(['disk.img']);
    // tar-stream does not know pax sparse: it sees the GNUSparseFile.0 entry (map + data).
    expect([...entries.keys()]).toEqual(['GNUSparseFile.0/disk.img']);
  });
});


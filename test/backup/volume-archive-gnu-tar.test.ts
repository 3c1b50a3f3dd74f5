/**
 * The volume archive's metadata guarantees, proven with GNU tar: files with mtimes after 2038 and
 * before 1970, hard links, sparse files with holes, long and non-ASCII names, a long symlink target,
 * uids/gids beyond ustar's 7 octal digits and special mode bits are archived by the runner, extracted
 * with `tar -xf`, and compared by stat (mtime, mode, owner, nlink and inode sharing, allocated blocks)
 * and content; `tar -tvf` lists them as they are.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream, chmodSync, chownSync, linkSync, lstatSync, mkdirSync, openSync, readFileSync, readlinkSync, symlinkSync, utimesSync, writeFileSync, writeSync, closeSync, ftruncateSync, lutimesSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { verifyArchive } from '../../src/backup/archive-verify.ts';
import { archiveDirectory, type ArchiveResult } from '../../src/backup/volume-archive.ts';
import { silentLogger } from '../../src/runtime/logger.ts';
import { removeTempDirsAfterEach, tempDir } from './temp-dirs.ts';

removeTempDirsAfterEach();
const sh = promisify(execFile);
const isRoot = process.getuid?.() === 0;

async function archiveTo(sourceDir: string, file: string): Promise<ArchiveResult> {
  const run = archiveDirectory({ sourceDir, logger: silentLogger });
  await pipeline(Readable.from(run.stream), createWriteStream(file));
  return run.result;
}

/** A file of `size` bytes with `data` written at each offset and holes everywhere else. */
function sparseFile(path: string, size: number, data: readonly (readonly [number, string])[]): void {
  const fd = openSync(path, 'w');
  ftruncateSync(fd, size);
  for (const [offset, text] of data) writeSync(fd, text, offset);
  closeSync(fd);
}

const sha = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');
const at = (iso: string): Date => new Date(iso);

describe('volume archive metadata, extracted with GNU tar', () => {
  it('keeps mtimes past 2038 and before 1970 (pax mtime records), which the ustar field cannot hold', async () => {
    const root = tempDir('bks-gnu-');
    const source = join(root, 'src');
    mkdirSync(source);
    const times = { 'y2039.txt': '2039-06-01T00:00:00Z', 'y2100.txt': '2100-01-01T00:00:00Z', 'y2300.txt': '2300-01-01T00:00:00Z', 'y1960.txt': '1960-03-01T10:00:00Z', 'y2021.txt': '2021-06-01T12:34:56Z' };
    for (const [name, iso] of Object.entries(times)) {
      writeFileSync(join(source, name), name);
      utimesSync(join(source, name), at(iso), at(iso));
    }
    mkdirSync(join(source, 'dir2040'));
    symlinkSync('y2039.txt', join(source, 'link2050'));
    lutimesSync(join(source, 'link2050'), at('2050-01-01T00:00:00Z'), at('2050-01-01T00:00:00Z'));
    utimesSync(join(source, 'dir2040'), at('2040-02-29T00:00:00Z'), at('2040-02-29T00:00:00Z'));
    const archive = join(root, 'a.tar.gz');
    const result = await archiveTo(source, archive);
    const out = join(root, 'out');
    mkdirSync(out);
    await sh('tar', ['-xzf', archive, '-C', out]);
    for (const [name, iso] of Object.entries(times)) expect(lstatSync(join(out, name)).mtime.toISOString(), name).toBe(at(iso).toISOString());
    expect(lstatSync(join(out, 'dir2040')).mtime.toISOString()).toBe('2040-02-29T00:00:00.000Z');
    expect(lstatSync(join(out, 'link2050')).mtime.toISOString()).toBe('2050-01-01T00:00:00.000Z');
    const listing = (await sh('tar', ['--utc', '-tvzf', archive])).stdout;
    expect(listing).toMatch(/2039-06-01 00:00 y2039\.txt/);
    expect(listing).toMatch(/2100-01-01 00:00 y2100\.txt/);
    expect(listing).toMatch(/1960-03-01 10:00 y1960\.txt/);
    expect((await verifyArchive(archive)).metadataSha256).toBe(result.metadataSha256);
  });

  it('stores a hard-linked file once and restores its names as one inode', async () => {
    const root = tempDir('bks-gnu-');
    const source = join(root, 'src');
    mkdirSync(join(source, 'a'), { recursive: true });
    mkdirSync(join(source, 'b'));
    writeFileSync(join(source, 'a', 'data.bin'), Buffer.alloc(1_000_000, 3));
    linkSync(join(source, 'a', 'data.bin'), join(source, 'b', 'same.bin'));
    linkSync(join(source, 'a', 'data.bin'), join(source, 'c-same.bin'));
    writeFileSync(join(source, 'single.txt'), 'one name');
    const archive = join(root, 'a.tar.gz');
    const result = await archiveTo(source, archive);
    expect({ files: result.files, hardLinks: result.hardLinks, bytes: result.bytes }).toEqual({ files: 2, hardLinks: 2, bytes: 1_000_008 });
    const out = join(root, 'out');
    mkdirSync(out);
    await sh('tar', ['-xzf', archive, '-C', out]);
    const [first, second, third] = ['a/data.bin', 'b/same.bin', 'c-same.bin'].map((p) => lstatSync(join(out, p)));
    expect(first!.nlink).toBe(3);
    expect(second!.ino).toBe(first!.ino);
    expect(third!.ino).toBe(first!.ino);
    expect(sha(join(out, 'b/same.bin'))).toBe(sha(join(source, 'a/data.bin')));
    expect(lstatSync(join(out, 'single.txt')).nlink).toBe(1);
    const listing = (await sh('tar', ['-tvzf', archive])).stdout;
    // The first name in sorted order holds the content; the others link to it.
    expect(listing).toMatch(/b\/same\.bin link to a\/data\.bin/);
    expect(listing).toMatch(/c-same\.bin link to a\/data\.bin/);
  });

  it('stores a sparse file without its holes; GNU tar restores it sparse, same bytes, same size', async () => {
    const root = tempDir('bks-gnu-');
    const source = join(root, 'src');
    mkdirSync(join(source, 'vm'), { recursive: true });
    const size = 128 * 1024 * 1024;
    sparseFile(join(source, 'vm', 'disk.img'), size, [[0, 'boot'], [100 * 1024 * 1024 + 10, 'middle'], [size - 3, 'end']]);
    // Ends in a hole, and a file that is all hole.
    sparseFile(join(source, 'tail-hole.img'), 64 * 1024 * 1024, [[8192, 'head']]);
    sparseFile(join(source, 'empty-hole.img'), 8 * 1024 * 1024, []);
    // Written zeros are data, not holes: a dense file of zeros is stored byte for byte.
    writeFileSync(join(source, 'zeros.bin'), Buffer.alloc(1 << 20));
    const before = lstatSync(join(source, 'vm', 'disk.img'));
    expect(before.blocks * 512).toBeLessThan(1 << 20);
    const archive = join(root, 'a.tar.gz');
    const result = await archiveTo(source, archive);
    expect(result.sparseFiles).toBe(3);
    expect(lstatSync(archive).size).toBeLessThan(1 << 20);
    const out = join(root, 'out');
    mkdirSync(out);
    await sh('tar', ['-xzf', archive, '-C', out]);
    for (const name of ['vm/disk.img', 'tail-hole.img', 'empty-hole.img', 'zeros.bin']) {
      const original = lstatSync(join(source, name));
      const restored = lstatSync(join(out, name));
      expect(restored.size, name).toBe(original.size);
      expect(sha(join(out, name)), name).toBe(sha(join(source, name)));
      // Allocated blocks: as few as the source's (a page of slack per data segment for the file system).
      expect(restored.blocks, name).toBeLessThanOrEqual(original.blocks + 3 * 8);
    }
    expect(lstatSync(join(out, 'zeros.bin')).blocks * 512).toBeGreaterThanOrEqual(1 << 20);
    const listing = (await sh('tar', ['-tvzf', archive])).stdout;
    expect(listing).toMatch(new RegExp(`${size} \\S+ \\S+ vm/disk\\.img`));
    expect(listing).not.toMatch(/GNUSparseFile/);
    expect((await verifyArchive(archive)).metadataSha256).toBe(result.metadataSha256);
  });

  it('keeps long and non-ASCII names, a long symlink target, special mode bits and large uids/gids', async () => {
    const root = tempDir('bks-gnu-');
    const source = join(root, 'src');
    const deep = join(source, 'd'.repeat(120), 'e'.repeat(120));
    mkdirSync(deep, { recursive: true });
    const longName = `${'f'.repeat(200)}.txt`;
    writeFileSync(join(deep, longName), 'deep');
    writeFileSync(join(source, 'ünïcödé-名前.txt'), 'utf8');
    symlinkSync(`${'t'.repeat(150)}/target`, join(source, 'long-link'));
    writeFileSync(join(source, 'setuid'), '#!/bin/sh\n');
    chmodSync(join(source, 'setuid'), 0o4755);
    writeFileSync(join(source, 'no-perms'), 'x');
    chmodSync(join(source, 'no-perms'), 0o000);
    if (isRoot) {
      // OpenShift assigns uids like this one: beyond ustar's 2097151.
      writeFileSync(join(source, 'openshift-owned'), 'x');
      chownSync(join(source, 'openshift-owned'), 1_000_680_000, 1_000_680_001);
    }
    const archive = join(root, 'a.tar.gz');
    const result = await archiveTo(source, archive);
    const out = join(root, 'out');
    mkdirSync(out);
    await sh('tar', ['--numeric-owner', '-xzpf', archive, '-C', out]);
    const restoredDeep = join(out, 'd'.repeat(120), 'e'.repeat(120), longName);
    expect(readFileSync(restoredDeep, 'utf8')).toBe('deep');
    expect(readFileSync(join(out, 'ünïcödé-名前.txt'), 'utf8')).toBe('utf8');
    expect(readlinkSync(join(out, 'long-link'))).toBe(`${'t'.repeat(150)}/target`);
    expect(lstatSync(join(out, 'setuid')).mode & 0o7777).toBe(0o4755);
    expect(lstatSync(join(out, 'no-perms')).mode & 0o7777).toBe(0);
    if (isRoot) {
      const owned = lstatSync(join(out, 'openshift-owned'));
      expect([owned.uid, owned.gid]).toEqual([1_000_680_000, 1_000_680_001]);
    }
    expect((await verifyArchive(archive)).metadataSha256).toBe(result.metadataSha256);
  });
});

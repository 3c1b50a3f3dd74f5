/**
 * `verifyArchive` catches archives whose metadata would not extract as written: the mtime fields the
 * previous writer (tar-stream) produced for 2039 and 2100, a saturated uid, a malformed pax record, a
 * sparse map that does not match its entry, a truncated tar, and headers that decode to other metadata
 * than the runner read from the volume.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, ftruncateSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';
import { describe, expect, it } from 'vitest';
import { ArchiveInvalidError, verifyArchive } from '../../src/backup/archive-verify.ts';
import { encodeSparseMap } from '../../src/backup/sparse-map.ts';
import { encodeHeader, END_OF_ARCHIVE, padding, type TarEntry } from '../../src/backup/tar-header.ts';
import { removeTempDirsAfterEach, tempDir } from './temp-dirs.ts';

removeTempDirsAfterEach();

/** A `.tar.gz` written by tar-stream, the runner's writer before pax mtimes. */
async function tarStreamArchive(entries: { name: string; mtime: Date; uid?: number }[]): Promise<Buffer> {
  const p = pack();
  for (const e of entries) p.entry({ name: e.name, mtime: e.mtime, uid: e.uid ?? 0, gid: 0, mode: 0o644 }, 'x');
  p.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of p) chunks.push(chunk as Buffer);
  return gzipSync(Buffer.concat(chunks));
}

function write(bytes: Buffer): string {
  const path = join(tempDir('bks-verify-'), 'a.tar.gz');
  writeFileSync(path, bytes);
  return path;
}

const base: TarEntry = { name: 'f.txt', type: 'file', mode: 0o644, uid: 0, gid: 0, mtime: 1_700_000_000, size: 1 };
const tar = (...parts: Buffer[]): Buffer => gzipSync(Buffer.concat([...parts, END_OF_ARCHIVE]));

describe('verifyArchive', () => {
  it('rejects the saturated mtime field of a 2039 file (tar-stream wrote 77777777777, year 2242)', async () => {
    const path = write(await tarStreamArchive([{ name: 'ok.txt', mtime: new Date('2021-01-01T00:00:00Z') }, { name: 'y2039.txt', mtime: new Date('2039-06-01T00:00:00Z') }]));
    await expect(verifyArchive(path)).rejects.toThrow(/entry 2 \("y2039\.txt"\): mtime field is saturated/);
  });

  it('rejects the non-octal mtime field of a 2100 file (tar-stream wrote a negative number)', async () => {
    const path = write(await tarStreamArchive([{ name: 'y2100.txt', mtime: new Date('2100-01-01T00:00:00Z') }]));
    await expect(verifyArchive(path)).rejects.toThrow(/y2100\.txt"\): mtime field "[^"]*" is not an octal number/);
  });

  it('rejects a uid that overflowed its field', async () => {
    const path = write(await tarStreamArchive([{ name: 'owned', mtime: new Date('2021-01-01T00:00:00Z'), uid: 1_000_680_000 }]));
    await expect(verifyArchive(path)).rejects.toThrow(/uid field is saturated/);
  });

  it('accepts what the runner writes for the same values (pax records) and counts the entries', async () => {
    const entries = [{ ...base, mtime: 2_190_000_000 }, { ...base, name: 'g', mtime: 4_102_444_800, uid: 1_000_680_000 }, { ...base, name: 'h', mtime: -310_000_000 }];
    const path = write(tar(...entries.flatMap((e) => [encodeHeader(e), Buffer.from('x'), padding(1)])));
    await expect(verifyArchive(path)).resolves.toMatchObject({ entries: 3 });
  });

  it('rejects an archive whose headers decode to other metadata than the writer read (metadata digest)', async () => {
    const path = write(tar(encodeHeader(base), Buffer.from('x'), padding(1)));
    const { metadataSha256 } = await verifyArchive(path);
    await expect(verifyArchive(path, { expectedMetadataSha256: metadataSha256 })).resolves.toMatchObject({ entries: 1 });
    await expect(verifyArchive(path, { expectedMetadataSha256: '0'.repeat(64) })).rejects.toThrow(/headers decode to other metadata/);
  });

  it('rejects a malformed pax record, a sparse map that does not match its entry, and a cut tar', async () => {
    const badPax = Buffer.concat([encodeHeader({ ...base, name: 'PaxHeaders/f', size: 20 }).subarray(0, 512), Buffer.from('99 mtime=1\n'.padEnd(20, 'z')), padding(20)]);
    // The pax header above is a plain file header: rewrite its typeflag to 'x' and fix the checksum.
    badPax[156] = 'x'.charCodeAt(0);
    badPax.fill(' ', 148, 156);
    let sum = 0;
    for (let i = 0; i < 512; i++) sum += badPax[i]!;
    badPax.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8, 'ascii');
    await expect(verifyArchive(write(tar(badPax, encodeHeader(base), Buffer.from('x'), padding(1))))).rejects.toThrow(/malformed pax record/);

    const map = encodeSparseMap([{ offset: 0, length: 10 }], 4096);
    const sparse = { ...base, name: 'GNUSparseFile.0/s', size: map.length + 5, pax: { 'GNU.sparse.major': '1', 'GNU.sparse.minor': '0', 'GNU.sparse.name': 's', 'GNU.sparse.realsize': '4096' } };
    await expect(verifyArchive(write(tar(encodeHeader(sparse), map, Buffer.alloc(5, 1), padding(5))))).rejects.toThrow(/sparse map promises 10 data bytes but the entry holds 5/);

    const whole = Buffer.concat([encodeHeader({ ...base, size: 2000 }), Buffer.alloc(1024)]);
    await expect(verifyArchive(write(gzipSync(whole)))).rejects.toThrow(ArchiveInvalidError);
    await expect(verifyArchive(write(gzipSync(whole)))).rejects.toThrow(/truncated/);
  });

  it('accepts what GNU tar writes (posix format with a sparse file, and its default gnu format)', async () => {
    const root = tempDir('bks-verify-');
    const source = join(root, 'src');
    mkdirSync(join(source, 'd'), { recursive: true });
    writeFileSync(join(source, 'd', `${'n'.repeat(150)}.txt`), 'long name');
    const fd = openSync(join(source, 'sparse.img'), 'w');
    ftruncateSync(fd, 16 << 20);
    writeSync(fd, 'data', 8 << 20);
    closeSync(fd);
    for (const format of ['posix', 'gnu']) {
      const archive = join(root, `${format}.tar.gz`);
      execFileSync('tar', [`--format=${format}`, '--sparse', '-czf', archive, '-C', source, '.']);
      if (format === 'posix') await expect(verifyArchive(archive)).resolves.toMatchObject({ entries: 4 });
      // GNU format stores a sparse file as its own entry type ('S'), which the runner never writes.
      else await expect(verifyArchive(archive)).rejects.toThrow(/entry type "S"/);
    }
  });
});


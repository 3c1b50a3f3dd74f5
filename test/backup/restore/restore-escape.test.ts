/**
 * Every way an archive could write outside the target directory is refused: in the verification pass,
 * before anything is written (exit 5), and for a symbolic link already in the target (with overwrite)
 * while extracting, without writing through it (exit 1). The file outside stays untouched each time.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT_REFUSED, runRestore } from '../../../src/backup/restore/run-restore.ts';
import { silentLogger } from '../../../src/runtime/logger.ts';
import { putVerified } from '../backup-fixtures.ts';
import { removeTempDirsAfterEach, tempDir } from '../temp-dirs.ts';
import { craftArchive, type CraftedEntry } from './restore-fixtures.ts';

removeTempDirsAfterEach();
const FILE = 'vol-20261201T000000Z.tar.gz';

/** A backup dir holding `archive`, an empty target, and `outside/victim` next to the target. */
function layout(archive: Buffer): { backups: string; target: string; outside: string } {
  const root = tempDir('bks-restore-escape-');
  const backups = join(root, 'backups');
  const target = join(root, 'target');
  const outside = join(root, 'outside');
  for (const dir of [backups, target, outside]) mkdirSync(dir);
  writeFileSync(join(outside, 'victim'), 'original');
  putVerified(backups, FILE, archive);
  return { backups, target, outside };
}

const restore = (backups: string, target: string, overwrite = false) =>
  runRestore({ kind: 'restore', from: backups, backup: FILE, schedule: undefined, targetDir: target, overwrite, allowIncomplete: false }, { logger: silentLogger });

const cases: readonly [string, readonly CraftedEntry[], RegExp][] = [
  ['an absolute name', [{ name: '/tmp/evil', data: 'x' }], /absolute name/],
  ['a ".." component', [{ name: 'a/../../outside/victim', data: 'pwned' }], /"\.\." component/],
  ['a leading ".."', [{ name: '../outside/victim', data: 'pwned' }], /"\.\." component/],
  ['a symlink entry, then a file through it', [{ name: 'link', type: 'symlink', linkname: '../outside' }, { name: 'link/victim', data: 'pwned' }], /parent "link" is a symbolic link/],
  ['a symlink entry, then a directory and file through it', [{ name: 'd/', type: 'directory', mode: 0o755 }, { name: 'd/l', type: 'symlink', linkname: '/' }, { name: 'd/l/tmp/x/', type: 'directory', mode: 0o755 }], /parent "d\/l" is a symbolic link/],
  ['a hard link to a path outside', [{ name: 'h', type: 'link', linkname: '../outside/victim' }], /"\.\." component/],
  ['a hard link to an absolute path', [{ name: 'h', type: 'link', linkname: '/etc/passwd' }], /absolute name/],
  ['a hard link to a file not extracted earlier', [{ name: 'h', type: 'link', linkname: 'later' }, { name: 'later', data: 'x' }], /no file extracted earlier/],
  ['a hard link through an archive symlink', [{ name: 'l', type: 'symlink', linkname: '../outside' }, { name: 'h', type: 'link', linkname: 'l/victim' }], /symbolic link/],
  ['a file naming the target itself', [{ name: './', data: 'x' }], /names the target directory itself/],
];

describe('backup restore refuses archives that would write outside the target', () => {
  for (const [what, entries, reason] of cases) {
    it(`${what}: refused before anything is written`, async () => {
      const { backups, target, outside } = layout(craftArchive([{ name: 'first.txt', data: 'written first' }, ...entries]));
      const outcome = await restore(backups, target);
      expect(outcome.exitCode).toBe(EXIT_REFUSED);
      expect(outcome.message).toMatch(reason);
      expect(readdirSync(target)).toEqual([]);
      expect(readFileSync(join(outside, 'victim'), 'utf8')).toBe('original');
    });
  }

  it('a GNU tar archive (symlink, then a file appended under the same name) is refused', async () => {
    const root = tempDir('bks-restore-gnu-');
    const one = join(root, 'one');
    const two = join(root, 'two');
    mkdirSync(one);
    mkdirSync(join(two, 'evil'), { recursive: true });
    symlinkSync('../outside', join(one, 'evil'));
    writeFileSync(join(two, 'evil', 'victim'), 'pwned');
    const tar = join(root, 'a.tar');
    execFileSync('tar', ['--format=posix', '-cf', tar, '-C', one, 'evil']);
    execFileSync('tar', ['--format=posix', '-rf', tar, '-C', two, 'evil/victim']);
    execFileSync('gzip', ['-n', tar]);
    const { backups, target, outside } = layout(readFileSync(`${tar}.gz`));
    const outcome = await restore(backups, target);
    expect(outcome.exitCode).toBe(EXIT_REFUSED);
    expect(outcome.message).toMatch(/parent "evil" is a symbolic link/);
    expect(readFileSync(join(outside, 'victim'), 'utf8')).toBe('original');
  });

  it('a symbolic link already in the target (--overwrite) is not written through', async () => {
    const { backups, target, outside } = layout(craftArchive([{ name: 'data/victim', data: 'pwned' }]));
    symlinkSync(outside, join(target, 'data'));
    const outcome = await restore(backups, target, true);
    expect(outcome.exitCode).toBe(1);
    expect(outcome.message).toMatch(/parent "data" is a symbolic link in the target directory/);
    expect(readFileSync(join(outside, 'victim'), 'utf8')).toBe('original');
  });

  it('a file entry whose name is a symbolic link already in the target replaces the link, not its target', async () => {
    const { backups, target, outside } = layout(craftArchive([{ name: 'victim', data: 'restored' }]));
    symlinkSync(join(outside, 'victim'), join(target, 'victim'));
    const outcome = await restore(backups, target, true);
    expect(outcome.exitCode).toBe(0);
    expect(readFileSync(join(target, 'victim'), 'utf8')).toBe('restored');
    expect(readFileSync(join(outside, 'victim'), 'utf8')).toBe('original');
  });
});

/**
 * An archive the runner made from a real directory, restored by `backup restore`, compared with what
 * GNU tar extracts from the same archive: every path's type, mode, owner, mtime, size, content, link
 * target, hard-link sharing and (for sparse files) allocated blocks. Also `latest`, an incomplete
 * archive, a sidecar missing or not matching, a non-empty target.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, closeSync, lchownSync, ftruncateSync, linkSync, lstatSync, lutimesSync, mkdirSync, openSync, readFileSync, readdirSync, readlinkSync, symlinkSync, utimesSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { EXIT_REFUSED, runRestore, type RestoreCommand } from '../../../src/backup/restore/run-restore.ts';
import { silentLogger } from '../../../src/runtime/logger.ts';
import { archiveBytes, putVerified } from '../backup-fixtures.ts';
import { removeTempDirsAfterEach, tempDir } from '../temp-dirs.ts';
import { runnerArchive } from './restore-fixtures.ts';

removeTempDirsAfterEach();
const sh = promisify(execFile);
const isRoot = process.getuid?.() === 0;

/** Path → what a restore must reproduce (inode numbers replaced by the first path sharing them). */
function describeTree(root: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const inodes = new Map<number, string>();
  const walk = (rel: string): void => {
    for (const name of readdirSync(join(root, rel)).sort()) {
      const path = rel ? `${rel}/${name}` : name;
      const full = join(root, path);
      const st = lstatSync(full);
      const base = { mode: st.mode, uid: st.uid, gid: st.gid, mtime: Math.floor(st.mtimeMs / 1000), nlink: st.nlink };
      if (st.isDirectory()) {
        out[path] = { type: 'dir', ...base };
        walk(path);
      } else if (st.isSymbolicLink()) {
        out[path] = { type: 'symlink', target: readlinkSync(full), uid: st.uid, gid: st.gid, mtime: base.mtime };
      } else {
        const first = inodes.get(st.ino) ?? path;
        inodes.set(st.ino, first);
        out[path] = { type: 'file', ...base, size: st.size, sha: createHash('sha256').update(readFileSync(full)).digest('hex'), sameAs: first, blocks: st.blocks };
      }
    }
  };
  walk('');
  return out;
}

function sourceTree(root: string): string {
  const source = join(root, 'source');
  mkdirSync(join(source, 'dir/sub'), { recursive: true });
  writeFileSync(join(source, 'dir/a.txt'), 'hello');
  writeFileSync(join(source, 'dir/sub/empty'), '');
  writeFileSync(join(source, 'exec.sh'), '#!/bin/sh\n');
  chmodSync(join(source, 'exec.sh'), 0o4755);
  writeFileSync(join(source, 'big.bin'), Buffer.alloc(300_000, 7));
  linkSync(join(source, 'dir/a.txt'), join(source, 'hard.txt'));
  symlinkSync('dir/a.txt', join(source, 'rel-link'));
  symlinkSync('/nonexistent/abs', join(source, 'dangling'));
  const fd = openSync(join(source, 'sparse.img'), 'w');
  ftruncateSync(fd, 64 << 20);
  writeSync(fd, 'head', 0);
  writeSync(fd, 'middle', 32 << 20);
  closeSync(fd);
  const holes = openSync(join(source, 'all-holes.img'), 'w');
  ftruncateSync(holes, 8 << 20);
  closeSync(holes);
  writeFileSync(join(source, 'y2040.txt'), 'future');
  utimesSync(join(source, 'y2040.txt'), new Date('2040-02-29T00:00:00Z'), new Date('2040-02-29T00:00:00Z'));
  writeFileSync(join(source, 'y1960.txt'), 'past');
  utimesSync(join(source, 'y1960.txt'), new Date('1960-03-01T00:00:00Z'), new Date('1960-03-01T00:00:00Z'));
  lutimesSync(join(source, 'rel-link'), new Date('2030-01-01T00:00:00Z'), new Date('2030-01-01T00:00:00Z'));
  mkdirSync(join(source, 'readonly'));
  writeFileSync(join(source, 'readonly/inside'), 'kept');
  chmodSync(join(source, 'readonly'), 0o555);
  utimesSync(join(source, 'dir'), new Date('2020-05-05T00:00:00Z'), new Date('2020-05-05T00:00:00Z'));
  if (isRoot) {
    // Owners beyond ustar's 7 octal digits (OpenShift uids) come back as root extracts them.
    writeFileSync(join(source, 'owned'), 'by someone');
    chownSync(join(source, 'owned'), 1_000_000_007, 4242);
    symlinkSync('owned', join(source, 'owned-link'));
    lchownSync(join(source, 'owned-link'), 2_000_000_000, 7);
  }
  return source;
}

const command = (from: string, targetDir: string, over: Partial<RestoreCommand> = {}): RestoreCommand => ({ kind: 'restore', from, backup: 'latest', schedule: undefined, targetDir, overwrite: false, allowIncomplete: false, ...over });

describe('backup restore, compared with GNU tar', () => {
  it('restores a runner archive exactly as GNU tar extracts it (modes, mtimes, links, sparse holes)', async () => {
    const root = tempDir('bks-restore-rt-');
    const source = sourceTree(root);
    const backups = join(root, 'backups');
    mkdirSync(backups);
    await runnerArchive(source, backups, 'vol-20261201T010000Z.tar.gz');
    const byGnu = join(root, 'gnu');
    const byRunner = join(root, 'runner');
    mkdirSync(byGnu);
    await sh('tar', ['-xpzf', join(backups, 'vol-20261201T010000Z.tar.gz'), '-C', byGnu]);
    const outcome = await runRestore(command(backups, byRunner), { logger: silentLogger });
    expect(outcome.message).toMatch(/^restored vol-20261201T010000Z\.tar\.gz/);
    expect(outcome.exitCode).toBe(0);
    const gnu = describeTree(byGnu);
    const ours = describeTree(byRunner);
    expect(ours).toEqual(gnu);
    // Not just equal to each other: the holes are holes, the source's content and metadata came back.
    const sparse = lstatSync(join(byRunner, 'sparse.img'));
    expect(sparse.size).toBe(64 << 20);
    expect(sparse.blocks * 512).toBeLessThan(1 << 20);
    expect(lstatSync(join(byRunner, 'all-holes.img')).blocks).toBe(0);
    expect(lstatSync(join(byRunner, 'exec.sh')).mode & 0o7777).toBe(0o4755);
    expect(lstatSync(join(byRunner, 'readonly')).mode & 0o7777).toBe(0o555);
    expect(lstatSync(join(byRunner, 'y2040.txt')).mtime.toISOString()).toBe('2040-02-29T00:00:00.000Z');
    expect(lstatSync(join(byRunner, 'y1960.txt')).mtime.toISOString()).toBe('1960-03-01T00:00:00.000Z');
    expect(lstatSync(join(byRunner, 'dir')).mtime.toISOString()).toBe('2020-05-05T00:00:00.000Z');
    expect(lstatSync(join(byRunner, 'hard.txt')).ino).toBe(lstatSync(join(byRunner, 'dir/a.txt')).ino);
    expect(readlinkSync(join(byRunner, 'dangling'))).toBe('/nonexistent/abs');
    expect(outcome.stats).toMatchObject({ hardLinks: 1, symlinks: isRoot ? 3 : 2 });
  });

  it('latest: the newest backup that verifies, skipping a damaged one and an incomplete one', async () => {
    const root = tempDir('bks-restore-latest-');
    const backups = join(root, 'backups');
    mkdirSync(backups);
    putVerified(backups, 'vol-20261201T010000Z.tar.gz', archiveBytes());
    const damaged = archiveBytes();
    damaged[damaged.length - 5]! ^= 0xff;
    putVerified(backups, 'vol-20261201T030000Z.tar.gz', archiveBytes());
    writeFileSync(join(backups, 'vol-20261201T030000Z.tar.gz'), damaged);
    putVerified(backups, 'vol-20261201T040000Z.incomplete.tar.gz', archiveBytes());
    putVerified(backups, 'other-20261201T050000Z.tar.gz', archiveBytes());
    const skipped: string[] = [];
    const logger = { ...silentLogger, warn: (message: string) => void skipped.push(message) } as unknown as typeof silentLogger;
    const outcome = await runRestore(command(backups, join(root, 't1'), { schedule: 'vol' }), { logger });
    expect(outcome.backup?.file).toBe('vol-20261201T010000Z.tar.gz');
    expect(skipped.join('\n')).toMatch(/vol-20261201T030000Z\.tar\.gz: not a valid tar\.gz archive: .*skipped, trying an older backup/);
    const incomplete = await runRestore(command(backups, join(root, 't2'), { schedule: 'vol', allowIncomplete: true }), { logger: silentLogger });
    expect(incomplete.backup?.file).toBe('vol-20261201T040000Z.incomplete.tar.gz');
    const named = await runRestore(command(backups, join(root, 't3'), { backup: 'vol-20261201T040000Z.incomplete.tar.gz' }), { logger: silentLogger });
    expect(named.exitCode).toBe(EXIT_REFUSED);
    expect(named.message).toMatch(/--allow-incomplete/);
    const none = await runRestore(command(backups, join(root, 't4'), { schedule: 'nobody' }), { logger: silentLogger });
    expect(none.exitCode).toBe(EXIT_REFUSED);
    expect(none.message).toMatch(/no backup of schedule nobody .* verifies \(there is none\)/);
    putVerified(backups, 'vol-20261201T060000Z.tar.gz', archiveBytes());
    writeFileSync(join(backups, 'vol-20261201T060000Z.tar.gz.sha256'), `${'0'.repeat(64)}  vol-20261201T060000Z.tar.gz\n`);
    const mismatch = await runRestore(command(backups, join(root, 't5'), { backup: 'vol-20261201T060000Z.tar.gz' }), { logger: silentLogger });
    expect(mismatch.exitCode).toBe(EXIT_REFUSED);
    expect(mismatch.message).toMatch(/SHA-256 [0-9a-f]{64} differs from the sidecar's 0{64}/);
  });

  it('refuses a backup without a sidecar and a target that is not empty; --overwrite restores over it', async () => {
    const root = tempDir('bks-restore-target-');
    const backups = join(root, 'backups');
    const target = join(root, 'target');
    mkdirSync(backups);
    mkdirSync(join(target, 'lost+found'), { recursive: true });
    putVerified(backups, 'vol-20261201T010000Z.tar.gz', archiveBytes(), false);
    const unsigned = await runRestore(command(backups, target), { logger: silentLogger });
    expect(unsigned.exitCode).toBe(EXIT_REFUSED);
    expect(unsigned.message).toMatch(/no \.sha256 sidecar/);
    putVerified(backups, 'vol-20261201T010000Z.tar.gz', archiveBytes());
    // lost+found, what a fresh ext4 volume holds, does not make it "not empty".
    expect((await runRestore(command(backups, target), { logger: silentLogger })).exitCode).toBe(0);
    expect(readFileSync(join(target, 'a.txt'), 'utf8')).toBe('abc');
    writeFileSync(join(target, 'a.txt'), 'changed');
    const again = await runRestore(command(backups, target), { logger: silentLogger });
    expect(again.exitCode).toBe(EXIT_REFUSED);
    expect(again.message).toMatch(/is not empty .*--overwrite/);
    expect(readFileSync(join(target, 'a.txt'), 'utf8')).toBe('changed');
    expect((await runRestore(command(backups, target, { overwrite: true }), { logger: silentLogger })).exitCode).toBe(0);
    expect(readFileSync(join(target, 'a.txt'), 'utf8')).toBe('abc');
  });
});

/**
 * The volume backup end to end: the bundle as its own process with the args buildCronJob emits for the
 * golden `03-pvc-source.yaml`; the archive is extracted with GNU tar and compared byte for byte (and
 * mode, mtime, symlink target) with the source. Also the failures an on-call person meets: files the
 * Pod's user may not read, a destination it may not write, a destination path that cannot exist.
 */
import { execFile } from 'node:child_process';
import { chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BACKUP_USER_ID } from '../../src/pure/backup-contract.ts';
import { buildCronJob } from '../../src/pure/index.ts';
import { buildRunnerBundle, containerCommand, goldenInput, killLeftoverRunners, removeNodeCopy, runRunner } from './runner-process.ts';

const sh = promisify(execFile);
const isRoot = process.getuid?.() === 0;
/** As root, run the runner as the Pod's user (65532); otherwise the test's own user plays that part. */
const asPodUser = isRoot ? { uid: BACKUP_USER_ID, gid: BACKUP_USER_ID } : {};

function walk(root: string): string[] {
  const out: string[] = [];
  const visit = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      out.push(relative(root, full));
      if (lstatSync(full).isDirectory()) visit(full);
    }
  };
  visit(root);
  return out;
}

describe('volume backup (--source=pvc)', () => {
  let work: string;
  let bundle: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'bks-volume-'));
    chmodSync(work, 0o755);
    bundle = await buildRunnerBundle();
  });

  afterEach(killLeftoverRunners);

  afterAll(() => {
    rmSync(work, { recursive: true, force: true });
    if (bundle) rmSync(dirname(bundle), { recursive: true, force: true });
    removeNodeCopy();
  });

  function command(source: string, destination: string): { args: string[]; env: Record<string, string> } {
    return containerCommand(goldenInput('03-pvc-source.yaml'), { destination, source });
  }

  it('archives modes, mtimes, symlinks and contents that GNU tar extracts byte for byte', async () => {
    const source = join(work, 'source');
    const t = new Date('2021-06-01T12:34:56Z');
    mkdirSync(join(source, 'pgdata', 'base'), { recursive: true });
    writeFileSync(join(source, 'a.txt'), 'hello\n');
    writeFileSync(join(source, 'pgdata', 'base', '16384'), randomBytes(3 * 1024 * 1024 + 17));
    writeFileSync(join(source, 'empty'), '');
    chmodSync(join(source, 'empty'), 0o000);
    writeFileSync(join(source, 'ünï cödé.txt'), 'unicode name');
    const longDir = join(source, 'd'.repeat(90), 'e'.repeat(90));
    mkdirSync(longDir, { recursive: true });
    writeFileSync(join(longDir, `${'f'.repeat(120)}.dat`), randomBytes(1000));
    symlinkSync('a.txt', join(source, 'link'));
    symlinkSync('/nonexistent/target', join(source, 'dangling'));
    chmodSync(join(source, 'a.txt'), 0o640);
    chmodSync(join(source, 'pgdata', 'base', '16384'), 0o600);
    chmodSync(join(source, 'pgdata'), 0o700);
    for (const p of ['a.txt', 'empty', 'pgdata/base/16384', 'pgdata/base', 'pgdata']) utimesSync(join(source, p), t, t);
    const destination = join(work, 'dest-ok');
    mkdirSync(destination);

    const { args, env } = command(source, destination);
    expect(args).toEqual(['backup', '--source=pvc', `--source-dir=${source}`, `--destination-dir=${destination}/app/data`, '--keep-last=7']);
    const result = await runRunner(bundle, args, env);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const dir = join(destination, 'app', 'data');
    const [archive, sidecar] = readdirSync(dir).sort() as [string, string];
    expect(archive).toMatch(/^data-pvc-\d{8}T\d{6}Z\.tar\.gz$/);
    expect(sidecar).toBe(`${archive}.sha256`);
    expect(lstatSync(join(dir, archive)).mode & 0o777).toBe(0o600);
    expect(result.records.at(-1)).toMatchObject({ exitCode: 0, source: 'pvc', files: 5, symlinks: 2, vanished: 0, changed: 0 });
    await sh('sha256sum', ['-c', sidecar], { cwd: dir });

    const out = join(work, 'extracted');
    mkdirSync(out);
    await sh('tar', ['-xzpf', join(dir, archive), '-C', out]);
    expect(walk(out)).toEqual(walk(source));
    for (const rel of walk(source)) {
      const a = lstatSync(join(source, rel));
      const b = lstatSync(join(out, rel));
      expect(b.mode, rel).toBe(a.mode);
      if (a.isSymbolicLink()) {
        expect(readlinkSync(join(out, rel))).toBe(readlinkSync(join(source, rel)));
        continue;
      }
      expect(Math.floor(b.mtimeMs / 1000), rel).toBe(Math.floor(a.mtimeMs / 1000));
      if (a.isFile()) expect(readFileSync(join(out, rel)).equals(readFileSync(join(source, rel))), rel).toBe(true);
    }

    const verify = await runRunner(bundle, ['backup', 'verify', join(dir, archive)], {});
    expect(verify.code).toBe(0);
    expect(JSON.parse(verify.stdout)).toMatchObject({ ok: true, kind: 'volume-archive', entries: walk(source).length, sidecar: 'matches' });
    // A truncated copy fails verification (gzip's length/CRC trailer).
    const bytes = readFileSync(join(dir, archive));
    writeFileSync(join(work, 'cut-20260101T000000Z.tar.gz'), bytes.subarray(0, bytes.length - 10));
    expect((await runRunner(bundle, ['backup', 'verify', join(work, 'cut-20260101T000000Z.tar.gz')], {})).code).toBe(1);
  });

  /** The uid/gid buildCronJob's Pod runs as (what the kubelet would apply), when the test may switch users. */
  function podUser(file: string): { uid?: number; gid?: number } {
    const context = buildCronJob(goldenInput(file)).spec!.jobTemplate.spec!.template.spec!.securityContext!;
    return isRoot ? { uid: context.runAsUser!, gid: context.runAsGroup! } : {};
  }

  it('fails listing the files the Pod user cannot read, with a hint; spec.podSecurityContext as the owner reads them', async () => {
    const source = join(work, 'source-private');
    mkdirSync(join(source, 'db'), { recursive: true });
    writeFileSync(join(source, 'README'), 'public');
    writeFileSync(join(source, 'db', 'data.db'), 'secret');
    writeFileSync(join(source, 'db', 'wal.log'), 'secret');
    // A database's 0600 files of its own uid (999, the owner golden 16 names); without root to chown,
    // mode 000 makes them unreadable to the test's user as well.
    for (const f of ['db/data.db', 'db/wal.log']) {
      chmodSync(join(source, f), isRoot ? 0o600 : 0o000);
      if (isRoot) chownSync(join(source, f), 999, 999);
    }
    const destination = join(work, 'dest-private');
    mkdirSync(destination, { mode: 0o777 });
    chmodSync(destination, 0o777);
    const { args, env } = command(source, destination);
    const result = await runRunner(bundle, args, env, podUser('03-pvc-source.yaml'));
    expect(result.code, result.stdout + result.stderr).toBe(1);
    const err = String(result.records.at(-1)!['err']);
    expect(err).toContain('cannot read 2 path(s)');
    expect(err).toContain('db/data.db, db/wal.log');
    expect(err).toContain('spec.podSecurityContext');
    expect(readdirSync(join(destination, 'app', 'data'))).toEqual([]);
    if (!isRoot) return;

    const owner = containerCommand(goldenInput('16-pod-security-context.yaml'), { destination, source });
    const asOwner = await runRunner(bundle, owner.args, owner.env, podUser('16-pod-security-context.yaml'));
    expect(asOwner.code, asOwner.stdout + asOwner.stderr).toBe(0);
    expect(asOwner.records.at(-1)).toMatchObject({ exitCode: 0, files: 3 });
  });

  it('fails with a clear message when the destination is not writable, leaving older backups untouched', async () => {
    const source = join(work, 'source-small');
    mkdirSync(source);
    writeFileSync(join(source, 'x'), 'x');
    const destination = join(work, 'dest-readonly');
    mkdirSync(join(destination, 'app', 'data'), { recursive: true });
    writeFileSync(join(destination, 'app', 'data', 'data-pvc-20260101T000000Z.tar.gz'), 'older backup');
    // As root the Pod user (65532) may not write root's 0755 directory; otherwise make it read-only.
    chmodSync(join(destination, 'app', 'data'), 0o555);
    const { args, env } = command(source, destination);
    const result = await runRunner(bundle, args, env, asPodUser);
    chmodSync(join(destination, 'app', 'data'), 0o755);
    expect(result.code).toBe(1);
    expect(String(result.records.at(-1)!['err'])).toMatch(/permission denied/);
    expect(readdirSync(join(destination, 'app', 'data'))).toEqual(['data-pvc-20260101T000000Z.tar.gz']);
    expect(readFileSync(join(destination, 'app', 'data', 'data-pvc-20260101T000000Z.tar.gz'), 'utf8')).toBe('older backup');
  });

  it('fails with a clear message when the destination refuses more bytes, removing its temp file and leaving older backups untouched', async () => {
    const source = join(work, 'source-big');
    mkdirSync(source);
    writeFileSync(join(source, 'random.bin'), randomBytes(3 << 20));
    const destination = join(work, 'dest-full');
    mkdirSync(join(destination, 'app', 'data'), { recursive: true });
    writeFileSync(join(destination, 'app', 'data', 'data-pvc-20260101T000000Z.tar.gz'), 'older backup');
    const { args, env } = command(source, destination);
    const result = await runRunner(bundle, args, env, { fileSizeLimitKiB: 1024 });
    expect(result.code, result.stdout + result.stderr).toBe(1);
    expect(String(result.records.at(-1)!['err'])).toMatch(/volume archive: the destination refuses a file this large .*EFBIG/);
    expect(readdirSync(join(destination, 'app', 'data'))).toEqual(['data-pvc-20260101T000000Z.tar.gz']);
    expect(readFileSync(join(destination, 'app', 'data', 'data-pvc-20260101T000000Z.tar.gz'), 'utf8')).toBe('older backup');
  });

  it('fails with a clear message when the destination directory cannot exist (a file is in the way)', async () => {
    const source = join(work, 'source-small2');
    mkdirSync(source);
    const destination = join(work, 'dest-blocked');
    mkdirSync(join(destination, 'app'), { recursive: true });
    writeFileSync(join(destination, 'app', 'data'), 'a file, not a directory');
    const { args, env } = command(source, destination);
    const result = await runRunner(bundle, args, env);
    expect(result.code).toBe(1);
    expect(String(result.records.at(-1)!['err'])).toMatch(/destination directory .* is not usable: .*not a directory/);
  });

  it('exits 2 with the usage on a bad command line', async () => {
    const result = await runRunner(bundle, ['backup', '--source=pvc', '--destination-dir=/x', '--keep-last=0'], { BACKUP_SCHEDULE_NAME: 'x' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--keep-last: expected an integer 1-1000, got "0"');
  });
});

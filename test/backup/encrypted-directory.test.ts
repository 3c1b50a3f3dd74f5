/**
 * Encryption to a directory (spec.encryption with a PersistentVolumeClaim destination): the runner
 * against a real etcd and a real directory with `--age-recipient`, parsed from the command line
 * buildCronJob emits. The files are undone with stock tools (Debian's `age` and `zstd`, etcdctl, GNU
 * tar), retention counts them, `backup verify` checks them with and without the identity.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseBackupArgs, type BackupCommand } from '../../src/backup/backup-args.ts';
import { verifyBackupFile, listBackups, formatList } from '../../src/backup/backup-tools.ts';
import { quickCheckBackup } from '../../src/backup/retention-candidates.ts';
import { EXIT_OK, runBackup } from '../../src/backup/run-backup.ts';
import { FakeClock } from '../../src/runtime/clock.ts';
import { EtcdHarness, readKeys, requireEtcd, writeKeys, type EtcdMember } from './etcd-harness.ts';
import { buildRunnerBundle, containerCommand, goldenInput, killLeftoverRunners, runRunner } from './runner-process.ts';

const sh = promisify(execFile);
const logger = pino({ level: 'silent' });

describe('backup runner: --age-recipient to a directory', () => {
  const harness = new EtcdHarness();
  const work = mkdtempSync(join(tmpdir(), 'bks-enc-dir-'));
  let etcd: EtcdMember;
  let keys: Map<string, string>;
  let identityFile: string;
  let recipient: string;

  beforeAll(async () => {
    requireEtcd();
    identityFile = join(work, 'key.txt');
    execFileSync('age-keygen', ['-o', identityFile], { stdio: 'ignore' });
    recipient = /public key: (age1\S+)/.exec(readFileSync(identityFile, 'utf8'))![1]!;
    etcd = await harness.start();
    keys = await writeKeys(harness, etcd, undefined, 300, { prefix: '/enc/' });
  }, 120_000);
  afterEach(killLeftoverRunners);
  afterAll(async () => {
    await harness.stopAll();
    rmSync(work, { recursive: true, force: true });
  });

  function command(args: string[]): Extract<BackupCommand, { kind: 'run' }> {
    const parsed = parseBackupArgs(args, { BACKUP_SCHEDULE_NAME: 'enc' });
    if (parsed.kind !== 'run') throw new Error(`expected a run, got ${parsed.kind}`);
    return parsed;
  }

  it('etcd: writes <schedule>-<stamp>.db.zst.age with a sidecar; age -d | zstd -d restores with etcdctl; verify with and without the identity; retention counts it', async () => {
    const dest = join(work, 'etcd-dest');
    const args = ['--source=etcd', `--etcd-endpoints=${etcd.endpoint}`, `--destination-dir=${dest}`, `--age-recipient=${recipient}`, '--keep-last=2'];
    for (const hour of [1, 2, 3]) {
      expect(await runBackup(command(args), { logger, clock: new FakeClock(Date.UTC(2026, 11, 1, hour, 0, 0)) })).toBe(EXIT_OK);
    }
    // keep-last 2: the encrypted backups are counted, so the first one went.
    expect(readdirSync(dest).filter((f) => !f.startsWith('.')).sort()).toEqual(['enc-20261201T020000Z.db.zst.age', 'enc-20261201T020000Z.db.zst.age.sha256', 'enc-20261201T030000Z.db.zst.age', 'enc-20261201T030000Z.db.zst.age.sha256']);
    const file = join(dest, 'enc-20261201T030000Z.db.zst.age');
    expect(readFileSync(file).subarray(0, 22).toString()).toBe('age-encryption.org/v1\n');
    await sh('sha256sum', ['-c', 'enc-20261201T030000Z.db.zst.age.sha256'], { cwd: dest });
    // The stock tools, right to left.
    const restored = join(work, 'restored');
    mkdirSync(restored);
    await sh('sh', ['-c', `age -d -i ${identityFile} ${file} | zstd -d -o ${join(restored, 'snapshot.db')}`]);
    await sh('etcdctl', ['snapshot', 'restore', join(restored, 'snapshot.db'), '--data-dir', join(restored, 'data')], { env: { ...process.env, ETCDCTL_API: '3' } });
    const second = await harness.start({ dataDir: join(restored, 'data') });
    expect(await readKeys(harness, second, undefined, '/enc/')).toEqual(keys);

    const without = await verifyBackupFile(file);
    expect(without).toMatchObject({ ok: true, sidecar: 'matches', content: 'not checked: encrypted, no --identity' });
    const withKey = await verifyBackupFile(file, [readFileSync(identityFile, 'utf8').split('\n').find((l) => l.startsWith('AGE-SECRET-KEY-'))!]);
    expect(withKey).toMatchObject({ ok: true, sidecar: 'matches', content: 'checked' });
    expect(withKey.totalKeys).toBeGreaterThanOrEqual(300);
    expect(formatList(await listBackups(dest))).toContain('yes (encrypted: SHA-256 against the sidecar only');
    expect(await quickCheckBackup(dest, 'enc-20261201T030000Z.db.zst.age', 'etcd-snapshot')).toBeUndefined();
  }, 180_000);

  it('retention does not count an encrypted file that is truncated, not age, or without its sidecar', async () => {
    const dest = join(work, 'bad');
    const args = ['--source=etcd', `--etcd-endpoints=${etcd.endpoint}`, `--destination-dir=${dest}`, `--age-recipient=${recipient}`, '--compression=gzip', '--keep-last=5'];
    expect(await runBackup(command(args), { logger, clock: new FakeClock(Date.UTC(2026, 11, 1, 4, 0, 0)) })).toBe(EXIT_OK);
    const name = 'enc-20261201T040000Z.db.gz.age';
    expect(await quickCheckBackup(dest, name, 'etcd-snapshot')).toBeUndefined();
    const bytes = readFileSync(join(dest, name));
    // Cut 8 bytes off the end: the last chunk still holds more than its tag, so only the sidecar's digest
    // (backup verify) tells; cut to 5 bytes after the nonce: not even a tag, the cheap check tells.
    truncateSync(join(dest, name), bytes.length - 8);
    expect(await quickCheckBackup(dest, name, 'etcd-snapshot')).toBeUndefined();
    expect(await verifyBackupFile(join(dest, name))).toMatchObject({ ok: false, sidecar: 'mismatch' });
    const headerEnd = bytes.indexOf('\n', bytes.indexOf('\n---') + 1) + 1;
    truncateSync(join(dest, name), headerEnd + 16 + 5);
    expect(await quickCheckBackup(dest, name, 'etcd-snapshot')).toMatch(/truncated/);
    const verify = await verifyBackupFile(join(dest, name));
    expect(verify).toMatchObject({ ok: false, sidecar: 'mismatch' });
    writeFileSync(join(dest, 'enc-20261201T050000Z.db.zst.age'), 'not age at all, just some bytes.....');
    writeFileSync(join(dest, 'enc-20261201T050000Z.db.zst.age.sha256'), `${'0'.repeat(64)}  enc-20261201T050000Z.db.zst.age\n`);
    expect(await quickCheckBackup(dest, 'enc-20261201T050000Z.db.zst.age', 'etcd-snapshot')).toMatch(/no age header/);
    rmSync(join(dest, 'enc-20261201T050000Z.db.zst.age.sha256'));
    expect(await quickCheckBackup(dest, 'enc-20261201T050000Z.db.zst.age', 'etcd-snapshot')).toMatch(/no \.sha256 sidecar/);
  }, 120_000);

  it('pvc: writes <schedule>-<stamp>.tar.zst.age; age -d | zstd -d | tar -x gives the volume back; verify --identity checks the tar', async () => {
    const source = join(work, 'volume');
    mkdirSync(join(source, 'sub'), { recursive: true });
    writeFileSync(join(source, 'a.txt'), 'hello\n');
    writeFileSync(join(source, 'sub', 'b.bin'), Buffer.alloc(300_000, 7));
    const dest = join(work, 'pvc-dest');
    const args = ['--source=pvc', `--source-dir=${source}`, `--destination-dir=${dest}`, `--age-recipient=${recipient}`, '--keep-last=3'];
    expect(await runBackup(command(args), { logger, clock: new FakeClock(Date.UTC(2026, 11, 1, 6, 0, 0)) })).toBe(EXIT_OK);
    const file = join(dest, 'enc-20261201T060000Z.tar.zst.age');
    const out = join(work, 'extracted');
    mkdirSync(out);
    await sh('sh', ['-c', `age -d -i ${identityFile} ${file} | zstd -d | tar -x -C ${out}`]);
    expect(readFileSync(join(out, 'a.txt'), 'utf8')).toBe('hello\n');
    expect(readFileSync(join(out, 'sub', 'b.bin')).equals(Buffer.alloc(300_000, 7))).toBe(true);
    const key = readFileSync(identityFile, 'utf8').split('\n').find((l) => l.startsWith('AGE-SECRET-KEY-'))!;
    expect(await verifyBackupFile(file, [key])).toMatchObject({ ok: true, content: 'checked', entries: 3 });
    // Another identity cannot decrypt it: the check says so.
    const other = execFileSync('age-keygen', { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split('\n').find((l) => l.startsWith('AGE-SECRET-KEY-'))!;
    expect(await verifyBackupFile(file, [other])).toMatchObject({ ok: false, content: 'checked' });
    expect(await quickCheckBackup(dest, 'enc-20261201T060000Z.tar.zst.age', 'volume-archive')).toBeUndefined();
  }, 120_000);

  it('the image: the Job buildCronJob makes for golden 24-v1-pvc-encrypted.yaml writes .tar.zst.age under the path; backup verify and list handle it', async () => {
    const bundle = await buildRunnerBundle();
    try {
      const source = join(work, 'job-volume');
      mkdirSync(source);
      writeFileSync(join(source, 'pg.dat'), Buffer.alloc(70_000, 1));
      const input = goldenInput('24-v1-pvc-encrypted.yaml');
      const schedule = { ...input, spec: { ...input.spec, encryption: { ageRecipients: [recipient] } } } as typeof input;
      const destination = join(work, 'job-dest');
      const { args, env } = containerCommand(schedule, { destination, source, tmp: work });
      const run = await runRunner(bundle, args, env);
      expect(run.code, run.stdout + run.stderr).toBe(0);
      const dir = join(destination, 'postgres');
      const [file, sidecar, ...rest] = readdirSync(dir).filter((f) => !f.startsWith('.')).sort();
      expect(rest).toEqual([]);
      expect(file).toMatch(/^db-encrypted-\d{8}T\d{6}Z\.tar\.zst\.age$/);
      expect(sidecar).toBe(`${file}.sha256`);
      const out = join(work, 'job-out');
      mkdirSync(out);
      await sh('sh', ['-c', `age -d -i ${identityFile} ${join(dir, file!)} | zstd -d | tar -x -C ${out}`]);
      expect(readFileSync(join(out, 'pg.dat')).equals(Buffer.alloc(70_000, 1))).toBe(true);
      const plain = await runRunner(bundle, ['backup', 'verify', join(dir, file!)], {});
      expect(plain.code, plain.stderr).toBe(0);
      expect(JSON.parse(plain.stdout)).toMatchObject({ ok: true, content: 'not checked: encrypted, no --identity' });
      const full = await runRunner(bundle, ['backup', 'verify', join(dir, file!), `--identity=${identityFile}`], {});
      expect(full.code, full.stderr).toBe(0);
      expect(JSON.parse(full.stdout)).toMatchObject({ ok: true, content: 'checked', entries: 1 });
      const list = await runRunner(bundle, ['backup', 'list', dir], {});
      expect(list.code, list.stderr).toBe(0);
      expect(list.stdout).toContain(file!);
    } finally {
      rmSync(join(bundle, '..'), { recursive: true, force: true });
    }
  }, 240_000);
});

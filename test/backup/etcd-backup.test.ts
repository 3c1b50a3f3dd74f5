/**
 * The backup runner against a real etcd 3.4 (Debian's etcd-server/etcd-client; no fakes on the happy
 * path): the bundle runs as its own process with the exact args buildCronJob emits for the golden
 * `01-etcd-tls.yaml`, over mutual TLS; the snapshot is restored with etcdctl (the README's "Restore"
 * commands, read from the README) into a second etcd that must serve every key back.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BackupSchedule } from '../../src/api/index.ts';
import { quickCheckBackup } from '../../src/backup/retention-candidates.ts';
import { putVerified, snapshotBytes } from './backup-fixtures.ts';
import { EtcdHarness, freePort, makeCerts, readKeys, requireEtcd, writeKeys, type Certs, type EtcdMember } from './etcd-harness.ts';
import { buildRunnerBundle, containerCommand, goldenInput, killLeftoverRunners, runRunner, startRunner } from './runner-process.ts';

const sh = promisify(execFile);
const KEY_COUNT = 5000;

/** The README's restore commands (section "Restore"), the lines the suite runs. */
function readmeRestoreCommands(): { check: string; restore: string } {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('\n## Restore'));
  const lines = section.split('\n');
  const find = (start: string): string => {
    const line = lines.find((l) => l.startsWith(start));
    if (!line) throw new Error(`README "Restore" has no line starting with ${start}`);
    return line;
  };
  return { check: find('sha256sum -c'), restore: find('ETCDCTL_API=3 etcdctl snapshot restore') };
}

describe('backup runner against a real etcd', () => {
  const harness = new EtcdHarness();
  let bundle: string;
  let certs: Certs;
  let wrongCerts: Certs;
  let etcd: EtcdMember;
  let keys: Map<string, string>;
  let work: string;

  /** A Secret mount with ca.crt, tls.crt, tls.key, as the kubelet projects it. */
  function tlsMount(ca: string, client: Certs): string {
    const dir = mkdtempSync(join(work, 'tls-'));
    copyFileSync(ca, join(dir, 'ca.crt'));
    copyFileSync(client.clientCert, join(dir, 'tls.crt'));
    copyFileSync(client.clientKey, join(dir, 'tls.key'));
    return dir;
  }

  type EtcdSource = NonNullable<BackupSchedule['spec']['source']['etcd']>;
  function etcdSchedule(endpoints: readonly string[], keepLast?: number): BackupSchedule {
    const input = goldenInput('01-etcd-tls.yaml');
    return { ...input, spec: { ...input.spec, source: { etcd: { ...input.spec.source.etcd!, endpoints: [...endpoints] as EtcdSource['endpoints'] } }, ...(keepLast ? { retention: { keepLast } } : {}) } };
  }

  function run(schedule: BackupSchedule, tls: string, destination = mkdtempSync(join(work, 'dest-'))): { destination: string; args: string[]; env: Record<string, string> } {
    return { destination, ...containerCommand(schedule, { destination, etcdTls: tls }) };
  }

  beforeAll(async () => {
    requireEtcd();
    work = harness.root;
    [bundle, certs, wrongCerts] = await Promise.all([buildRunnerBundle(), makeCerts(join(harness.root, 'pki')), makeCerts(join(harness.root, 'pki-other'), 'other')]);
    etcd = await harness.start({ certs });
    keys = await writeKeys(harness, etcd, certs, KEY_COUNT, { prefix: 'drill/' });
  }, 120_000);

  // A runner frozen with SIGSTOP by a test that then failed would otherwise stay stopped for good.
  afterEach(killLeftoverRunners);

  afterAll(async () => {
    await harness.stopAll();
    if (bundle) rmSync(dirname(bundle), { recursive: true, force: true });
  });

  it('writes a verified 0600 snapshot with the args of buildCronJob, and etcdctl restores every key into a second etcd', async () => {
    const { destination, args, env } = run(etcdSchedule([etcd.endpoint]), tlsMount(certs.ca, certs));
    // The golden destination path ("nightly") does not exist yet: the runner creates it below the mount.
    expect(args).toContain(`--destination-dir=${destination}/nightly`);
    const result = await runRunner(bundle, args, env);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const dir = join(destination, 'nightly');
    const files = readdirSync(dir).sort();
    expect(files).toHaveLength(2);
    const [db, sidecar] = files as [string, string];
    expect(db).toMatch(/^nightly-etcd-\d{8}T\d{6}Z\.db$/);
    expect(sidecar).toBe(`${db}.sha256`);
    for (const f of files) expect(statSync(join(dir, f)).mode & 0o777).toBe(0o600);

    const summary = result.records.at(-1)!;
    expect(summary).toMatchObject({ msg: 'backup complete: written, verified and pruned', exitCode: 0, source: 'etcd', endpoint: etcd.endpoint });
    const status = JSON.parse(await harness.etcdctl(etcd, certs, ['snapshot', 'status', join(dir, db), '-w', 'json'])) as { revision: number; totalKey: number; totalSize: number };
    expect(summary['revision']).toBe(status.revision);
    expect(summary['totalKeys']).toBe(status.totalKey);
    expect(summary['size']).toBe(statSync(join(dir, db)).size);

    // The README's restore drill, verbatim.
    const { check, restore } = readmeRestoreCommands();
    await sh('sh', ['-c', check.replace(/\s+#.*$/, '')], { cwd: dir, env: { ...process.env, SNAPSHOT: db } });
    const peerPort = await freePort();
    const dataDir = join(work, 'restored');
    await sh('sh', ['-c', restore], { cwd: dir, env: { ...process.env, SNAPSHOT: db, DATA_DIR: dataDir, NAME: 'restored', PEER_URL: `http://127.0.0.1:${peerPort}` } });
    const restored = await harness.start({ dataDir, name: 'restored', peerPort });
    const back = await readKeys(harness, restored, undefined, 'drill/');
    expect(back.size).toBe(KEY_COUNT);
    expect(back).toEqual(keys);

    const verify = await runRunner(bundle, ['backup', 'verify', join(dir, db)], {});
    expect(verify.code, verify.stderr).toBe(0);
    expect(JSON.parse(verify.stdout)).toMatchObject({ ok: true, sidecar: 'matches', revision: status.revision, totalKeys: status.totalKey });
    const list = await runRunner(bundle, ['backup', 'list', dir], {});
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`^${db.replace('.', '\\.')}\\s+\\d{4}-\\d{2}-\\d{2}T\\S+\\s+${statSync(join(dir, db)).size}\\s+yes\\s+yes$`, 'm'));

    // A flipped byte, a truncation, a mismatched sidecar: verify says no, exit 1.
    const bad = join(work, 'bad');
    mkdirSync(bad);
    const bytes = readFileSync(join(dir, db));
    const flipped = Buffer.from(bytes);
    flipped[8192] = flipped[8192]! ^ 0xff;
    writeFileSync(join(bad, 'x-20260101T000000Z.db'), flipped);
    writeFileSync(join(bad, 'x-20260102T000000Z.db'), bytes.subarray(0, bytes.length - 100));
    writeFileSync(join(bad, 'x-20260104T000000Z.db'), bytes.subarray(0, bytes.length - 4096));
    writeFileSync(join(bad, 'x-20260103T000000Z.db'), bytes);
    writeFileSync(join(bad, 'x-20260103T000000Z.db.sha256'), `${'0'.repeat(64)}  x-20260103T000000Z.db\n`);
    for (const [file, problem] of [['x-20260101T000000Z.db', /SHA-256 trailer does not match/], ['x-20260102T000000Z.db', /size \d+ is not a bbolt database/], ['x-20260103T000000Z.db', /differs from the sidecar/], ['x-20260104T000000Z.db', /meta page counts \d+ pages .*: truncated/]] as const) {
      const r = await runRunner(bundle, ['backup', 'verify', join(bad, file)], {});
      expect(r.code, file).toBe(1);
      expect(r.stderr).toMatch(problem);
    }
    expect((await runRunner(bundle, ['backup', 'list', bad], {})).code).toBe(1);
  });

  it('moves on to the second endpoint when the first is dead, logging why the first failed', async () => {
    const dead = `https://127.0.0.1:${await freePort()}`;
    const { destination, args, env } = run(etcdSchedule([dead, etcd.endpoint]), tlsMount(certs.ca, certs));
    const result = await runRunner(bundle, args, env);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const warning = result.records.find((r) => r['msg'] === 'etcd snapshot: endpoint failed; trying the next one');
    expect(warning).toMatchObject({ endpoint: dead, level: 'warn' });
    expect(String(warning!['reason'])).toMatch(/UNAVAILABLE.*ECONNREFUSED/);
    expect(result.records.at(-1)).toMatchObject({ exitCode: 0, endpoint: etcd.endpoint });
    expect(readdirSync(join(destination, 'nightly')).filter((f) => f.endsWith('.db'))).toHaveLength(1);
  });

  it('fails with exit 1 and a clear error when the CA does not match the server, leaving nothing behind', async () => {
    const { destination, args, env } = run(etcdSchedule([etcd.endpoint]), tlsMount(wrongCerts.ca, certs));
    const result = await runRunner(bundle, args, env);
    expect(result.code).toBe(1);
    const summary = result.records.at(-1)!;
    expect(summary['msg']).toMatch(/^backup failed: etcd snapshot: no endpoint delivered a valid snapshot/);
    expect(String(summary['err'])).toMatch(/UNAVAILABLE.*certificate/i);
    expect(readdirSync(join(destination, 'nightly'))).toEqual([]);
  });

  describe('on a ~40 MB database (far more than loopback socket buffers hold, so a cut lands mid-stream)', () => {
    let big: EtcdMember;

    beforeAll(async () => {
      big = await harness.start({ certs });
      await writeKeys(harness, big, certs, 1300, { prefix: 'big/', valueBytes: 30_000, parallel: 2, batch: 40 });
    }, 120_000);

    /** Starts the runner and freezes it (SIGSTOP) once its temp file holds data. */
    async function frozenMidStream(destination?: string): Promise<{ runner: ReturnType<typeof startRunner>; dir: string; args: string[]; env: Record<string, string> }> {
      const { args, env } = run(etcdSchedule([big.endpoint]), tlsMount(certs.ca, certs), destination ?? mkdtempSync(join(work, 'dest-')));
      const destinationDir = args.find((a) => a.startsWith('--destination-dir='))!.slice('--destination-dir='.length);
      const dir = destinationDir;
      const runner = startRunner(bundle, args, env);
      let exited = false;
      void runner.done.then(() => (exited = true));
      const deadline = Date.now() + 20_000;
      for (;;) {
        if (exited) throw new Error(`the runner finished before it could be stopped mid-stream: ${(await runner.done).stdout}`);
        if (Date.now() > deadline) throw new Error('the runner wrote no snapshot data within 20 s');
        const temp = existsSync(dir) ? readdirSync(dir).find((f) => f.includes('.partial-')) : undefined;
        if (temp && statSync(join(dir, temp), { throwIfNoEntry: false })?.size) break;
        await new Promise((r) => setTimeout(r, 2));
      }
      runner.kill('SIGSTOP');
      return { runner, dir, args, env };
    }

    it('lets only one of two simultaneous runs of a schedule write: the second fails cleanly, the first completes', async () => {
      const first = await frozenMidStream();
      const second = await runRunner(bundle, first.args, first.env);
      expect(second.code).toBe(1);
      expect(String(second.records.at(-1)!['err'])).toMatch(/another backup of this schedule is running/);
      first.runner.kill('SIGCONT');
      const result = await first.runner.done;
      expect(result.code, result.stdout).toBe(0);
      expect(readdirSync(first.dir).filter((f) => f.endsWith('.db'))).toHaveLength(1);
      expect(readdirSync(first.dir).filter((f) => f.startsWith('.'))).toEqual([]);
    });

    it('stops on SIGTERM (activeDeadlineSeconds, Pod deletion) with exit 1, removing its temp file and lock', async () => {
      const { runner, dir } = await frozenMidStream();
      runner.kill('SIGTERM');
      runner.kill('SIGCONT');
      const result = await runner.done;
      expect(result.code, result.stdout).toBe(1);
      expect(result.records.some((r) => r['msg'] === 'stopping: a backup still being written is abandoned and its temp file removed' && r['signal'] === 'SIGTERM')).toBe(true);
      expect(readdirSync(dir)).toEqual([]);
    });

    it('fails with exit 1 and leaves no final file when etcd dies mid-snapshot', async () => {
      const { runner, dir } = await frozenMidStream();
      await harness.kill(big);
      runner.kill('SIGCONT');
      const result = await runner.done;
      expect(result.code, result.stdout).toBe(1);
      expect(String(result.records.at(-1)!['err'])).toContain(big.endpoint);
      expect(readdirSync(dir)).toEqual([]);
    });
  });

  it('stops at once with exit 1 when the destination refuses bytes (not an endpoint failure: no retry elsewhere)', async () => {
    // The same member under its other name (the certificate has both): a second endpoint that works.
    const { destination, args, env } = run(etcdSchedule([etcd.endpoint, etcd.endpoint.replace('127.0.0.1', 'localhost')]), tlsMount(certs.ca, certs));
    const result = await runRunner(bundle, args, env, { fileSizeLimitKiB: 64 });
    expect(result.code, result.stdout + result.stderr).toBe(1);
    expect(String(result.records.at(-1)!['err'])).toMatch(/etcd snapshot: cannot write it: the destination refuses a file this large .*EFBIG/);
    expect(result.records.filter((r) => r['msg'] === 'etcd snapshot: streaming')).toHaveLength(1);
    expect(readdirSync(join(destination, 'nightly'))).toEqual([]);
  });

  it('prunes only its own oldest backups (and their sidecars) in a directory shared with other schedules', async () => {
    const destination = mkdtempSync(join(work, 'dest-'));
    const dir = join(destination, 'nightly');
    mkdirSync(dir);
    const own = ['nightly-etcd-20260101T020000Z.db', 'nightly-etcd-20260102T020000Z.db', 'nightly-etcd-20260103T020000Z.db', 'nightly-etcd-20260104T020000Z.db'];
    const others = ['nightly-etcd-extra-20250101T020000Z.db', 'nightly-20250101T020000Z.tar.gz', 'notes.txt'];
    // Own backups that pass retention's checks (a bbolt shape and a sidecar): only verified backups count.
    for (const f of own) putVerified(dir, f, snapshotBytes());
    // Issue 30's attack: 8 bytes under this schedule's name, dated 2099. It must not hold a --keep-last slot.
    const future = 'nightly-etcd-20991231T000000Z.db';
    writeFileSync(join(dir, future), 'garbage!');
    for (const f of others) {
      writeFileSync(join(dir, f), 'old');
      writeFileSync(join(dir, `${f}.sha256`), 'old');
    }
    const { args, env } = run(etcdSchedule([etcd.endpoint], 3), tlsMount(certs.ca, certs), destination);
    expect(args).toContain('--keep-last=3');
    const result = await runRunner(bundle, args, env);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const after = readdirSync(dir);
    // The one new snapshot: the only .db file that was not there before (its stamp is today's, any year).
    const before = new Set([...own, ...others, future]);
    const fresh = after.filter((f) => f.endsWith('.db') && !before.has(f));
    expect(fresh).toHaveLength(1);
    const written = fresh[0]!;
    expect(written).toMatch(/^nightly-etcd-\d{8}T\d{6}Z\.db$/);
    expect(after.sort()).toEqual(
      [written, `${written}.sha256`, own[2]!, `${own[2]}.sha256`, own[3]!, `${own[3]}.sha256`, future, ...others, ...others.map((f) => `${f}.sha256`)].sort(),
    );
    expect(result.records.at(-1)!['pruned']).toEqual([own[0], own[1]]);
    // A real snapshot passes the checks retention runs on every kept backup (a later run counts it).
    expect(await quickCheckBackup(dir, written, 'etcd-snapshot')).toBeUndefined();
    expect(result.records.find((r) => r['file'] === future && String(r['msg']).startsWith('retention: '))?.['msg']).toMatch(/^retention: nightly-etcd-20991231T000000Z\.db is not counted and not deleted: not verified: no \.sha256 sidecar/);
  });

  it('refuses to start a second writer while another run of the schedule holds the lock, and takes over a stale lock', async () => {
    const destination = mkdtempSync(join(work, 'dest-'));
    const dir = join(destination, 'nightly');
    mkdirSync(dir);
    const lock = join(dir, '.nightly-etcd.lock');
    writeFileSync(lock, 'other-pod pid 1\n');
    const { args, env } = run(etcdSchedule([etcd.endpoint]), tlsMount(certs.ca, certs), destination);
    const busy = await runRunner(bundle, args, env);
    expect(busy.code).toBe(1);
    expect(String(busy.records.at(-1)!['err'])).toMatch(/another backup of this schedule is running .*other-pod pid 1/);
    expect(readdirSync(dir)).toEqual(['.nightly-etcd.lock']);

    const old = new Date(Date.now() - 10 * 60_000);
    utimesSync(lock, old, old);
    const stale = await runRunner(bundle, args, env);
    expect(stale.code, stale.stdout).toBe(0);
    expect(stale.records.some((r) => r['msg'] === 'took over a stale lock left by a run that did not finish')).toBe(true);
    expect(readdirSync(dir).filter((f) => f.startsWith('.'))).toEqual([]);
  });
});

import { mkdirSync, readdirSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { EXIT_INCOMPLETE, EXIT_OK, EXIT_PRUNE_FAILED, runBackup } from '../../src/backup/run-backup.ts';
import { formatList, listBackups } from '../../src/backup/backup-tools.ts';
import type { RetentionPolicy } from '../../src/backup/retention.ts';
import { FakeClock } from '../../src/runtime/clock.ts';
import { quickCheckBackup } from '../../src/backup/retention-candidates.ts';
import { archiveBytes, putVerified } from './backup-fixtures.ts';
import { removeTempDirsAfterEach, sourceAndDestination } from './temp-dirs.ts';

/** An old backup whose unlink fails (EACCES), as on a destination that refuses deletes: pruning fails. */
const UNDELETABLE = 'pg-20250101T000000Z.tar.gz';
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  const unlink: typeof actual.unlink = async (path) => {
    if (String(path).endsWith(`/${UNDELETABLE}`)) throw Object.assign(new Error(`EACCES: permission denied, unlink '${String(path)}'`), { code: 'EACCES' });
    return actual.unlink(path);
  };
  return { ...actual, unlink, default: { ...actual, unlink } };
});

removeTempDirsAfterEach();

function setup(): { source: string; destination: string; lines: Record<string, unknown>[]; logger: pino.Logger } {
  const { source, destination } = sourceAndDestination('table.db', 2_000_000, 3);
  // Two older backups of this schedule (sound, with sidecars): keep-last=1 would prune both after a complete run.
  for (const old of ['pg-20260101T000000Z.tar.gz', 'pg-20260102T000000Z.tar.gz']) putVerified(destination, old, archiveBytes());
  const lines: Record<string, unknown>[] = [];
  const logger = pino({}, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
  return { source, destination, lines, logger };
}

const command = (source: string, destination: string, retention: RetentionPolicy = { keepLast: 1 }) => ({ kind: 'run', source: { kind: 'pvc', sourceDir: source }, destinationDir: destination, retention, schedule: 'pg', namespace: 'db' }) as const;

describe('runBackup (volume)', () => {
  it('exits 3 and keeps older backups when a file changes while it is archived; the archive is still written and verified', async () => {
    const { source, destination, lines, logger } = setup();
    let cut = false;
    const code = await runBackup(command(source, destination), {
      logger,
      clock: new FakeClock(Date.UTC(2026, 10, 30, 3, 30, 0)),
      onBytesCopied: () => {
        if (!cut) truncateSync(join(source, 'table.db'), 10);
        cut = true;
      },
    });
    expect(code).toBe(EXIT_INCOMPLETE);
    expect(readdirSync(destination).sort()).toEqual(['pg-20260101T000000Z.tar.gz', 'pg-20260101T000000Z.tar.gz.sha256', 'pg-20260102T000000Z.tar.gz', 'pg-20260102T000000Z.tar.gz.sha256', 'pg-20261130T033000Z.incomplete.tar.gz', 'pg-20261130T033000Z.incomplete.tar.gz.sha256']);
    expect(lines.at(-1)).toMatchObject({ level: 50, exitCode: 3, changed: 1, msg: expect.stringMatching(/incomplete: 1 file\(s\) changed while read \(table\.db\); kept as pg-20261130T033000Z\.incomplete\.tar\.gz, not counted by retention; older backups kept/) });
  });

  it('keeps only the newest incomplete archive, and a later complete run prunes by complete backups only', async () => {
    const { source, destination, logger } = setup();
    const tear = (): ((n: number) => void) => {
      let cut = false;
      return () => {
        if (!cut) truncateSync(join(source, 'table.db'), 10);
        cut = true;
        writeFileSync(join(source, 'table.db'), Buffer.alloc(2_000_000, 3));
      };
    };
    for (const hour of [1, 2, 3]) {
      const code = await runBackup(command(source, destination), { logger, clock: new FakeClock(Date.UTC(2026, 10, 30, hour, 0, 0)), onBytesCopied: tear() });
      expect(code).toBe(EXIT_INCOMPLETE);
    }
    expect(readdirSync(destination).sort()).toEqual(['pg-20260101T000000Z.tar.gz', 'pg-20260101T000000Z.tar.gz.sha256', 'pg-20260102T000000Z.tar.gz', 'pg-20260102T000000Z.tar.gz.sha256', 'pg-20261130T030000Z.incomplete.tar.gz', 'pg-20261130T030000Z.incomplete.tar.gz.sha256']);
    // keep-last=2: the new complete backup and the newest older complete one; the torn archive is not a backup.
    const code = await runBackup(command(source, destination, { keepLast: 2 }), { logger, clock: new FakeClock(Date.UTC(2026, 10, 30, 4, 0, 0)) });
    expect(code).toBe(EXIT_OK);
    expect(readdirSync(destination).sort()).toEqual(['pg-20260102T000000Z.tar.gz', 'pg-20260102T000000Z.tar.gz.sha256', 'pg-20261130T030000Z.incomplete.tar.gz', 'pg-20261130T030000Z.incomplete.tar.gz.sha256', 'pg-20261130T040000Z.tar.gz', 'pg-20261130T040000Z.tar.gz.sha256']);
    const rows = await listBackups(destination);
    expect(rows.map((r) => [r.file, r.incomplete, r.verification.ok])).toEqual([
      ['pg-20260102T000000Z.tar.gz', false, true],
      ['pg-20261130T030000Z.incomplete.tar.gz', true, true],
      ['pg-20261130T040000Z.tar.gz', false, true],
    ]);
    expect(formatList(rows)).toMatch(/^pg-20261130T030000Z\.incomplete\.tar\.gz\s+2026-11-30T03:00:00\.000Z\s+\d+\s+NO \(files changed while read\)\s+yes$/m);
    expect(formatList(rows)).toMatch(/^pg-20261130T040000Z\.tar\.gz\s+\S+\s+\d+\s+yes\s+yes$/m);
  });

  it('exits 0 and prunes to keep-last when nothing changed', async () => {
    const { source, destination, lines, logger } = setup();
    const code = await runBackup(command(source, destination), { logger, clock: new FakeClock(Date.UTC(2026, 10, 30, 3, 30, 0)) });
    expect(code).toBe(EXIT_OK);
    expect(readdirSync(destination).sort()).toEqual(['pg-20261130T033000Z.tar.gz', 'pg-20261130T033000Z.tar.gz.sha256']);
    expect(lines.at(-1)).toMatchObject({ exitCode: 0, pruned: ['pg-20260101T000000Z.tar.gz', 'pg-20260102T000000Z.tar.gz'] });
    // The archive the runner wrote passes the checks retention runs on every kept backup (a later run counts it).
    expect(await quickCheckBackup(destination, 'pg-20261130T033000Z.tar.gz', 'volume-archive')).toBeUndefined();
  });

  it('prunes by the grandfather-father-son rules it is given: monthly keeps the newest of each month', async () => {
    const { source, destination, lines, logger } = setup();
    const code = await runBackup(command(source, destination, { keepMonthly: 2 }), { logger, clock: new FakeClock(Date.UTC(2026, 10, 30, 3, 30, 0)) });
    expect(code).toBe(EXIT_OK);
    // November (the new one) and January's newest (the 2nd) stay; the 1st of January goes.
    expect(readdirSync(destination).sort()).toEqual(['pg-20260102T000000Z.tar.gz', 'pg-20260102T000000Z.tar.gz.sha256', 'pg-20261130T033000Z.tar.gz', 'pg-20261130T033000Z.tar.gz.sha256']);
    expect(lines.at(-1)).toMatchObject({ exitCode: 0, pruned: ['pg-20260101T000000Z.tar.gz'] });
  });

  it("removes this schedule's leftover temp files only, never another schedule's lock or temp file that shares the prefix", async () => {
    const { source, destination, lines, logger } = setup();
    // Schedule `pg.partial-x` is a valid name: its lock and temp file start with `.pg.partial-` too.
    const foreign = ['.pg.partial-x.lock', '.pg.partial-x.partial-0123456789ab', '.pg.partial-0123456789ab.sha256'];
    for (const file of [...foreign, '.pg.partial-0123456789ab']) writeFileSync(join(destination, file), 'x');
    const code = await runBackup(command(source, destination), { logger, clock: new FakeClock(Date.UTC(2026, 10, 30, 3, 30, 0)) });
    expect(code).toBe(EXIT_OK);
    expect(readdirSync(destination).filter((f) => f.startsWith('.')).sort()).toEqual([...foreign].sort());
    expect(lines.filter((l) => l['msg'] === 'removed a temp file left by an interrupted run').map((l) => l['file'])).toEqual(['.pg.partial-0123456789ab']);
  });

  it('exits 4 (not 1, which the Job retries) when the backup is durable but pruning fails, and keeps the new backup', async () => {
    const { source, destination, lines, logger } = setup();
    // A sound old backup the destination refuses to delete (the mocked unlink above).
    putVerified(destination, UNDELETABLE, archiveBytes());
    const code = await runBackup(command(source, destination), { logger, clock: new FakeClock(Date.UTC(2026, 10, 30, 3, 30, 0)) });
    expect(code).toBe(EXIT_PRUNE_FAILED);
    expect(readdirSync(destination)).toContain('pg-20261130T033000Z.tar.gz.sha256');
    expect(lines.at(-1)).toMatchObject({ level: 50, exitCode: 4, file: join(destination, 'pg-20261130T033000Z.tar.gz'), msg: expect.stringMatching(/^backup written and verified, but pruning failed: retention: cannot delete pg-20250101T000000Z\.tar\.gz/) });
  });

  it('never counts nor deletes a future-dated or unverified file of the schedule; warns naming each and why', async () => {
    const { source, destination, lines, logger } = setup();
    // The attack of issue 30: 8 bytes under a name dated 2099 (a clock once set ahead does the same).
    writeFileSync(join(destination, 'pg-20991231T000000Z.tar.gz'), 'garbage!');
    putVerified(destination, 'pg-20991230T000000Z.tar.gz', archiveBytes());
    writeFileSync(join(destination, 'pg-20261129T000000Z.tar.gz'), 'no sidecar, not gzip');
    const code = await runBackup(command(source, destination, { keepLast: 2 }), { logger, clock: new FakeClock(Date.UTC(2026, 10, 30, 3, 30, 0)) });
    expect(code).toBe(EXIT_OK);
    // keep-last=2: the new backup and the newest real older one; none of the three strangers counted or deleted.
    expect(readdirSync(destination).filter((f) => !f.endsWith('.sha256')).sort()).toEqual(['pg-20260102T000000Z.tar.gz', 'pg-20261129T000000Z.tar.gz', 'pg-20261130T033000Z.tar.gz', 'pg-20991230T000000Z.tar.gz', 'pg-20991231T000000Z.tar.gz']);
    expect(lines.at(-1)).toMatchObject({ exitCode: 0, pruned: ['pg-20260101T000000Z.tar.gz'] });
    const warnings = lines.filter((l) => l['level'] === 40 && typeof l['msg'] === 'string' && l['msg'].startsWith('retention: '));
    expect(warnings.map((w) => [w['file'], w['reason']])).toEqual([
      ['pg-20261129T000000Z.tar.gz', expect.stringMatching(/^not verified: no \.sha256 sidecar/)],
      ['pg-20991230T000000Z.tar.gz', expect.stringMatching(/^dated 2099-12-30T00:00:00\.000Z, later than now \(2026-11-30T03:30:00\.000Z\) plus 300 s of clock skew/)],
      ['pg-20991231T000000Z.tar.gz', expect.stringMatching(/^not verified: no \.sha256 sidecar/)],
    ]);
    expect(warnings[0]!['msg']).toMatch(/^retention: pg-20261129T000000Z\.tar\.gz is not counted and not deleted: not verified: no \.sha256 sidecar.*; check it \(backup verify\) and delete or fix it by hand$/);
  });
});

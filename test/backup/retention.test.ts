import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backupFileName, parseBackupName } from '../../src/backup/backup-names.ts';
import { formatStamp } from '../../src/pure/backup-stamp.ts';
import { DEFAULT_MAX_FUTURE_SKEW_MS, directoryCandidates, isoWeek, planIncompleteCleanup, planRetention, type RetentionPlan, type RetentionPolicy } from '../../src/backup/retention.ts';

const day = (d: number): number => Date.UTC(2026, 0, d, 2, 0, 0);

/** Later than every backup below, so none is future-dated unless a test says so. */
const NOW = Date.UTC(2030, 0, 1);

/** The planner over a directory listing in which every backup passed the checks (as the runner feeds it). */
function planFiles(input: { files: readonly string[]; schedule: string; policy: RetentionPolicy; justWritten: string; now?: number }): RetentionPlan {
  const { files, schedule, policy, justWritten, now = NOW } = input;
  return planRetention({ candidates: directoryCandidates(files, schedule), policy, justWritten: { name: justWritten, time: parseBackupName(justWritten)!.time }, now });
}

describe('backup file names', () => {
  it('formats the UTC start time as yyyymmddThhmmssZ', () => {
    expect(formatStamp(Date.UTC(2026, 10, 30, 2, 0, 7, 999))).toBe('20261130T020007Z');
    expect(backupFileName('nightly-etcd', day(5), 'etcd-snapshot')).toBe('nightly-etcd-20260105T020000Z.db');
    expect(backupFileName('data.pvc', day(5), 'volume-archive')).toBe('data.pvc-20260105T020000Z.tar.gz');
    expect(backupFileName('data.pvc', day(5), 'volume-archive', true)).toBe('data.pvc-20260105T020000Z.incomplete.tar.gz');
    // Encrypted: the bucket's names, one suffix per pipeline stage.
    expect(backupFileName('nightly-etcd', day(5), 'etcd-snapshot', false, { compression: 'zstd' })).toBe('nightly-etcd-20260105T020000Z.db.zst.age');
    expect(backupFileName('data.pvc', day(5), 'volume-archive', true, { compression: 'gzip' })).toBe('data.pvc-20260105T020000Z.incomplete.tar.gz.age');
    expect(backupFileName('data.pvc', day(5), 'volume-archive', false, { compression: 'none' })).toBe('data.pvc-20260105T020000Z.tar.age');
  });

  it.each([
    ['nightly-etcd-20260105T020000Z.db', { schedule: 'nightly-etcd', kind: 'etcd-snapshot', time: day(5) }],
    ['a-b-20260105T020000Z.tar.gz', { schedule: 'a-b', kind: 'volume-archive', time: day(5), incomplete: false }],
    ['a-b-20260105T020000Z.incomplete.tar.gz', { schedule: 'a-b', kind: 'volume-archive', time: day(5), incomplete: true, encrypted: false }],
    ['e-20260105T020000Z.db.zst.age', { schedule: 'e', kind: 'etcd-snapshot', encrypted: true, compression: 'zstd' }],
    ['e-20260105T020000Z.db.age', { schedule: 'e', kind: 'etcd-snapshot', encrypted: true, compression: 'none' }],
    ['e-20260105T020000Z.incomplete.tar.zst.age', { schedule: 'e', kind: 'volume-archive', encrypted: true, incomplete: true }],
  ])('parses %s', (file, expected) => {
    expect(parseBackupName(file)).toMatchObject({ file, ...expected });
  });

  it.each(['nightly-etcd-20260105T020000Z.db.sha256', 'e-20260105T020000Z.db.zst', 'e-20260105T020000Z.tar', 'e-20260105T020000Z.tar.zst', 'e-20260105T020000Z.db.gz', 'e-20260105T020000Z.db.zst.age.sha256', '.nightly-etcd.partial-abc', 'nightly-etcd-20261341T020000Z.db', 'nightly-etcd-20260105T020000.db', 'notes.txt', '-20260105T020000Z.db'])('ignores %s', (file) => {
    expect(parseBackupName(file)).toBeUndefined();
  });

  it('round-trips every schedule name and second', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z0-9]([-a-z0-9.]{0,30}[a-z0-9])?$/), fc.integer({ min: 0, max: 4102444800 }), (schedule, seconds) => {
        const parsed = parseBackupName(backupFileName(schedule, seconds * 1000, 'etcd-snapshot'));
        expect(parsed).toMatchObject({ schedule, time: seconds * 1000 });
      }),
    );
  });
});

describe('planRetention', () => {
  const own = [1, 2, 3, 4, 5].map((d) => backupFileName('nightly', day(d), 'etcd-snapshot'));

  it('deletes the oldest of its own backups beyond keepLast, each with its sidecar, oldest first', () => {
    const files = [...own, ...own.map((f) => `${f}.sha256`)];
    const plan = planFiles({ files, schedule: 'nightly', policy: { keepLast: 3 }, justWritten: own[4]! });
    expect(plan.delete).toEqual([own[0], `${own[0]}.sha256`, own[1], `${own[1]}.sha256`]);
    expect(plan.keep).toEqual([own[4], own[3], own[2]]);
  });

  it('never touches another schedule, even one whose name extends this one', () => {
    const others = [backupFileName('nightly-extra', day(1), 'etcd-snapshot'), backupFileName('nightly.eu', day(1), 'volume-archive'), 'nightly.lock', 'README'];
    const plan = planFiles({ files: [...own, ...others], schedule: 'nightly', policy: { keepLast: 1 }, justWritten: own[4]! });
    expect(plan.delete).toEqual(own.slice(0, 4));
  });

  it('never deletes the backup just written, even when a clock step makes it look older than the others', () => {
    const justWritten = backupFileName('nightly', day(0), 'etcd-snapshot');
    const plan = planFiles({ files: [...own, justWritten], schedule: 'nightly', policy: { keepLast: 2 }, justWritten });
    expect(plan.delete).not.toContain(justWritten);
    expect(plan.keep).toEqual([justWritten, own[4]]);
  });

  it('keeps everything while there are no more than keepLast backups', () => {
    expect(planFiles({ files: own, schedule: 'nightly', policy: { keepLast: 5 }, justWritten: own[4]! }).delete).toEqual([]);
  });

  it.each([0, -1, 1.5, Number.NaN])('rejects keepLast %s', (keepLast) => {
    expect(() => planFiles({ files: own, schedule: 'nightly', policy: { keepLast }, justWritten: own[4]! })).toThrow(/keepLast: must be an integer >= 1/);
  });
});

/** The planner before grandfather-father-son rules existed (keep-last only), as the reference it must still match. */
function keepLastBefore(files: readonly string[], schedule: string, keepLast: number, justWritten: string): { delete: string[]; keep: string[] } {
  const own = files
    .map(parseBackupName)
    .filter((n) => n !== undefined && n.schedule === schedule && n.file !== justWritten)
    .map((n) => n!)
    .sort((a, b) => b.time - a.time || (a.file < b.file ? 1 : -1));
  const toDelete: string[] = [];
  for (const { file } of own.slice(keepLast - 1).reverse()) {
    toDelete.push(file);
    if (files.includes(`${file}.sha256`)) toDelete.push(`${file}.sha256`);
  }
  return { delete: toDelete, keep: [justWritten, ...own.slice(0, keepLast - 1).map((n) => n.file)] };
}

const HOUR = 3_600_000;
const at = (iso: string): string => backupFileName('gfs', Date.parse(iso), 'volume-archive');

describe('planRetention with grandfather-father-son rules (restic forget semantics, UTC)', () => {
  it.each([
    ['2026-01-01T00:00:00Z', 202601], // a Thursday: week 1
    ['2027-01-01T12:00:00Z', 202653], // a Friday: the last week of 2026, which has 53
    ['2024-12-30T00:00:00Z', 202501], // a Monday: week 1 of the next ISO year
    ['2026-11-29T23:59:59Z', 202648], // a Sunday ends its week
    ['2026-11-30T00:00:00Z', 202649], // the Monday after starts the next
  ])('puts %s in ISO week %i, like Go time.ISOWeek', (iso, week) => {
    expect(isoWeek(Date.parse(iso))).toBe(week);
  });

  it('keeps the newest backup of each of the N newest days, weeks and months, and the oldest while counts are left', () => {
    // One backup at 02:00 and 14:00 every day from 2026-10-01 to 2026-11-30.
    const times: string[] = [];
    for (let t = Date.parse('2026-10-01T02:00:00Z'); t <= Date.parse('2026-11-30T14:00:00Z'); t += 12 * HOUR) times.push(new Date(t).toISOString().replace('.000', ''));
    const files = times.map(at);
    const justWritten = files.at(-1)!;
    const kept = (policy: RetentionPolicy): readonly string[] => planFiles({ files, schedule: 'gfs', policy, justWritten }).keep;
    expect(kept({ keepDaily: 3 })).toEqual([at('2026-11-30T14:00:00Z'), at('2026-11-29T14:00:00Z'), at('2026-11-28T14:00:00Z')]);
    // Weeks start on Monday: 30 Nov is a Monday, 29 Nov the Sunday closing the week before.
    expect(kept({ keepWeekly: 3 })).toEqual([at('2026-11-30T14:00:00Z'), at('2026-11-29T14:00:00Z'), at('2026-11-22T14:00:00Z')]);
    expect(kept({ keepMonthly: 2 })).toEqual([at('2026-11-30T14:00:00Z'), at('2026-10-31T14:00:00Z')]);
    // Three months asked, two present: the oldest backup is kept as well (restic ≥ 0.14).
    expect(kept({ keepMonthly: 3 })).toEqual([at('2026-11-30T14:00:00Z'), at('2026-10-31T14:00:00Z'), at('2026-10-01T02:00:00Z')]);
    // Rules combine: kept by any rule is kept; the last two are the two newest runs.
    expect(kept({ keepLast: 2, keepDaily: 2, keepMonthly: 2 })).toEqual([at('2026-11-30T14:00:00Z'), at('2026-11-30T02:00:00Z'), at('2026-11-29T14:00:00Z'), at('2026-10-31T14:00:00Z')]);
  });

  it('takes days in UTC, not in any local zone', () => {
    const files = [at('2026-11-29T23:30:00Z'), at('2026-11-30T00:30:00Z')];
    expect(planFiles({ files, schedule: 'gfs', policy: { keepDaily: 1 }, justWritten: files[1]! }).delete).toEqual([files[0]]);
  });

  it('counts the backup just written as the newest even when a clock step dated it earlier', () => {
    const files = [at('2026-11-28T02:00:00Z'), at('2026-11-29T02:00:00Z'), at('2026-11-01T02:00:00Z')];
    const plan = planFiles({ files, schedule: 'gfs', policy: { keepDaily: 2 }, justWritten: files[2]! });
    expect(plan.keep).toEqual([files[2], files[1]]);
  });

  it.each([
    [{}, /at least one of keepLast, keepDaily, keepWeekly, keepMonthly must be set/],
    [{ keepDaily: 0 }, /keepDaily: must be an integer >= 1, got 0/],
    [{ keepLast: 2, keepMonthly: 1.5 }, /keepMonthly: must be an integer >= 1, got 1.5/],
  ])('rejects the policy %j naming the rule', (policy, message) => {
    expect(() => planFiles({ files: [], schedule: 'gfs', policy, justWritten: at('2026-11-30T00:00:00Z') })).toThrow(message);
  });

  const backups = fc.uniqueArray(fc.integer({ min: Date.parse('2025-01-01T00:00:00Z') / 1000, max: Date.parse('2027-12-31T00:00:00Z') / 1000 }), { minLength: 1, maxLength: 60 });
  const count = fc.option(fc.integer({ min: 1, max: 12 }), { nil: undefined });
  const policies = fc
    .record({ keepLast: count, keepDaily: count, keepWeekly: count, keepMonthly: count })
    .map((p) => Object.fromEntries(Object.entries(p).filter(([, v]) => v !== undefined)) as RetentionPolicy)
    .filter((p) => Object.keys(p).length > 0);

  it('with keep-last alone decides exactly as the keep-last planner before it', () => {
    fc.assert(
      fc.property(backups, fc.integer({ min: 1, max: 70 }), fc.boolean(), (seconds, keepLast, sidecars) => {
        const own = seconds.map((s) => backupFileName('nightly', s * 1000, 'etcd-snapshot'));
        const files = [...own, ...(sidecars ? own.map((f) => `${f}.sha256`) : []), backupFileName('other', seconds[0]! * 1000, 'etcd-snapshot')];
        const justWritten = own[own.length - 1]!;
        expect(planFiles({ files, schedule: 'nightly', policy: { keepLast }, justWritten })).toEqual({ ...keepLastBefore(files, 'nightly', keepLast, justWritten), ignored: [] });
      }),
    );
  });

  it('keeps exactly the newest backup of each of the N newest buckets per rule, plus the oldest when a rule has counts left', () => {
    const buckets: Record<keyof RetentionPolicy, (t: number) => string> = {
      keepLast: (t) => String(t),
      keepDaily: (t) => new Date(t).toISOString().slice(0, 10),
      keepWeekly: (t) => String(isoWeek(t)),
      keepMonthly: (t) => new Date(t).toISOString().slice(0, 7),
    };
    fc.assert(
      fc.property(backups, policies, (seconds, policy) => {
        const times = [...seconds].sort((a, b) => b - a).map((s) => s * 1000);
        const files = times.map((t) => backupFileName('gfs', t, 'volume-archive'));
        const plan = planFiles({ files, schedule: 'gfs', policy, justWritten: files[0]! });
        // The definition, set-wise: for each rule, the newest time of each bucket, the N newest buckets.
        const expected = new Set<string>();
        for (const [rule, n] of Object.entries(policy) as [keyof RetentionPolicy, number][]) {
          const newestOfBucket = new Map<string, number>();
          for (const t of times) if (!newestOfBucket.has(buckets[rule](t))) newestOfBucket.set(buckets[rule](t), t);
          for (const t of [...newestOfBucket.values()].slice(0, n)) expected.add(backupFileName('gfs', t, 'volume-archive'));
          if (newestOfBucket.size < n) expected.add(files.at(-1)!);
        }
        expect(new Set(plan.keep)).toEqual(expected);
        expect([...plan.keep, ...plan.delete].sort()).toEqual([...files].sort());
        expect(plan.keep.length).toBeLessThanOrEqual(Object.values(policy).reduce((a, b) => a + b, 0));
        expect(plan.keep[0]).toBe(files[0]);
      }),
    );
  });
});

describe('incomplete archives', () => {
  const complete = [1, 2].map((d) => backupFileName('pg', day(d), 'volume-archive'));
  const torn = [3, 4, 5].map((d) => backupFileName('pg', day(d), 'volume-archive', true));

  it('are never counted by retention: keep-last=2 after a complete run keeps the newest complete backup, whatever the torn ones', () => {
    const justWritten = backupFileName('pg', day(6), 'volume-archive');
    const plan = planFiles({ files: [...complete, ...torn, ...torn.map((f) => `${f}.sha256`), justWritten], schedule: 'pg', policy: { keepLast: 2 }, justWritten });
    expect(plan.keep).toEqual([justWritten, complete[1]]);
    expect(plan.delete).toEqual([complete[0]]);
  });

  it("after an incomplete run, the schedule's older incomplete archives and their sidecars go; complete backups and other schedules stay", () => {
    const other = backupFileName('pg-x', day(1), 'volume-archive', true);
    const files = [...complete, ...torn, `${torn[0]}.sha256`, other];
    expect(planIncompleteCleanup(files, 'pg', torn[2]!)).toEqual([torn[0], `${torn[0]}.sha256`, torn[1]]);
  });
});

describe('planRetention counts only verified backups dated no later than now plus the skew', () => {
  const now = Date.UTC(2026, 10, 30, 3, 0, 0);
  const real = [27, 28, 29].map((d) => ({ name: backupFileName('etcd', Date.UTC(2026, 10, d, 2), 'etcd-snapshot'), time: Date.UTC(2026, 10, d, 2), companions: [`${backupFileName('etcd', Date.UTC(2026, 10, d, 2), 'etcd-snapshot')}.sha256`] }));
  const justWritten = { name: backupFileName('etcd', Date.UTC(2026, 10, 30, 2), 'etcd-snapshot'), time: Date.UTC(2026, 10, 30, 2) };

  it('a future-dated name (etcd-20991231T000000Z.db) holds no keep-last slot, is reported, and is never deleted', () => {
    const future = { name: 'etcd-20991231T000000Z.db', time: parseBackupName('etcd-20991231T000000Z.db')!.time };
    const plan = planRetention({ candidates: [future, ...real], policy: { keepLast: 2 }, justWritten, now });
    // Without the check the future file took the slot after the new backup and all three real ones went.
    expect(plan.keep).toEqual([justWritten.name, real[2]!.name]);
    expect(plan.delete).toEqual([real[0]!.name, `${real[0]!.name}.sha256`, real[1]!.name, `${real[1]!.name}.sha256`]);
    expect(plan.ignored).toEqual([{ name: future.name, reason: 'dated 2099-12-31T00:00:00.000Z, later than now (2026-11-30T03:00:00.000Z) plus 300 s of clock skew: named by a clock that was ahead' }]);
  });

  it('an unverified backup is neither counted nor deleted, whatever its date', () => {
    const garbage = { name: backupFileName('etcd', Date.UTC(2026, 10, 29, 12), 'etcd-snapshot'), time: Date.UTC(2026, 10, 29, 12), problem: 'no .sha256 sidecar' };
    const old = { name: backupFileName('etcd', Date.UTC(2020, 0, 1), 'etcd-snapshot'), time: Date.UTC(2020, 0, 1), problem: 'size 8 is not a bbolt database' };
    const plan = planRetention({ candidates: [...real, garbage, old], policy: { keepDaily: 2 }, justWritten, now });
    expect(plan.keep).toEqual([justWritten.name, real[2]!.name]);
    expect(plan.delete).not.toContain(garbage.name);
    expect(plan.delete).not.toContain(old.name);
    expect(plan.ignored).toEqual([
      { name: old.name, reason: 'not verified: size 8 is not a bbolt database' },
      { name: garbage.name, reason: 'not verified: no .sha256 sidecar' },
    ]);
  });

  it('allows the skew and no more: 5 minutes ahead counts, a second later does not', () => {
    const at = (ms: number) => ({ name: backupFileName('etcd', ms, 'etcd-snapshot'), time: ms });
    const edge = at(now + DEFAULT_MAX_FUTURE_SKEW_MS);
    const beyond = at(now + DEFAULT_MAX_FUTURE_SKEW_MS + 1000);
    const plan = planRetention({ candidates: [edge, beyond, ...real], policy: { keepLast: 2 }, justWritten, now });
    expect(plan.keep).toEqual([justWritten.name, edge.name]);
    expect(plan.ignored.map((i) => i.name)).toEqual([beyond.name]);
    expect(planRetention({ candidates: [beyond], policy: { keepLast: 2 }, justWritten, now, maxFutureSkewMs: 3_600_000 }).keep).toEqual([justWritten.name, beyond.name]);
  });

  it.each([
    [{ now: Number.NaN }, /now: must be a finite epoch time in milliseconds, got NaN/],
    [{ maxFutureSkewMs: -1 }, /maxFutureSkewMs: must be a finite number >= 0, got -1/],
  ])('rejects %j naming the field', (override, message) => {
    expect(() => planRetention({ candidates: real, policy: { keepLast: 1 }, justWritten, now, ...override })).toThrow(message);
  });

  it('ignores the backup just written when the listing has it too', () => {
    expect(planRetention({ candidates: [justWritten, ...real], policy: { keepLast: 1 }, justWritten, now }).keep).toEqual([justWritten.name]);
  });
});

/**
 * The reconciler with a Job cache (issue 31): the runs of the child's Jobs reach the status once, with
 * their Events, and a run due and never started is reported once its start grace has passed, the
 * schedule coming back by itself for the next one (FakeClock: no real time).
 */
import { describe, expect, it } from 'vitest';
import type { JobView } from '../../src/pure/backup-runs.ts';
import { MISSED_CHECK_SPREAD_MS, missedCheckSpreadMs } from '../../src/pure/missed-runs.ts';
import { asStored } from './fixtures.ts';
import { converged, desiredOf, harness, KEY } from './reconciler-harness.ts';

const MINUTE = 60_000;

/** A converged schedule created at `created`, and its child whose CronJob last scheduled a run at `lastSchedule`. */
function subject(created: string, lastSchedule: string | undefined, spec: Record<string, unknown> = {}, uid?: string) {
  const s = converged(1, spec);
  s.metadata.creationTimestamp = created;
  if (uid) s.metadata.uid = uid;
  const child = asStored(desiredOf(s), '300');
  if (lastSchedule) child['status'] = { lastScheduleTime: lastSchedule };
  return { s, child };
}

describe('reconciler: backup runs', () => {
  it('reports a failed Job once (status, Warning BackupFailed), and nothing more when nothing changed', async () => {
    const { s, child } = subject('2026-11-29T00:00:00Z', '2026-11-30T00:02:00Z');
    s.status = { ...s.status, recentRuns: [], conditions: [...(s.status?.conditions ?? [])] };
    const failed: JobView = { metadata: { name: 'nightly-etcd-1' }, status: { startTime: '2026-11-30T00:02:00Z', conditions: [{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline', lastTransitionTime: '2026-11-30T00:40:00Z' }] } };
    const h = harness({ schedule: s, child }, {}, { jobs: () => [failed] });
    const first = await h.reconciler.reconcileWithMove(KEY);
    expect(first.move).toBe('updateStatus');
    const status = h.schedules.get(KEY)?.status;
    expect(status?.lastFailedTime).toBe('2026-11-30T00:40:00Z');
    expect(status?.conditions?.find((c) => c.type === 'LastBackupSucceeded')).toMatchObject({ status: 'False', reason: 'DeadlineExceeded' });
    expect(h.events.map((e) => `${e.type} ${e.reason}`)).toEqual(['Warning BackupFailed']);
    const again = await h.reconciler.reconcileWithMove(KEY);
    expect(again.move).toBe('none');
    expect(h.events).toHaveLength(1);
  });

  it('reports a run due and never started after its grace, once, and comes back for the next due run', async () => {
    // Daily at 02:00 UTC; the CronJob last ran the day before; the harness clock is 2026-11-30T01:00Z.
    const { s, child } = subject('2026-11-28T00:00:00Z', '2026-11-29T02:00:00Z');
    const h = harness({ schedule: s, child }, {}, { jobs: () => [] });
    const before = await h.reconciler.reconcileWithMove(KEY);
    expect(h.schedules.get(KEY)?.status?.lastMissedTime).toBeUndefined();
    // The next check: 02:00 + 5 min grace + 1 s + this schedule's spread.
    const spread = missedCheckSpreadMs(s.metadata.uid!);
    expect(before.result.requeueAfterMs).toBe(65 * MINUTE + 1_000 + spread);
    h.clock.step(64 * MINUTE);
    await h.reconciler.reconcileWithMove(KEY);
    expect(h.schedules.get(KEY)?.status?.lastMissedTime).toBeUndefined();
    h.clock.step(2 * MINUTE);
    const missed = await h.reconciler.reconcileWithMove(KEY);
    expect(missed.move).toBe('updateStatus');
    expect(h.schedules.get(KEY)?.status?.lastMissedTime).toBe('2026-11-30T02:00:00Z');
    expect(h.events.filter((e) => e.reason === 'BackupMissed')).toEqual([expect.objectContaining({ type: 'Warning', message: expect.stringContaining('due at 2026-11-30T02:00:00Z') })]);
    const next = await h.reconciler.reconcileWithMove(KEY);
    expect(next.move).toBe('none');
    expect(next.result.requeueAfterMs).toBe(24 * 60 * MINUTE - MINUTE + 1_000 + spread);
    expect(h.events.filter((e) => e.reason === 'BackupMissed')).toHaveLength(1);
  });

  // Thousands of schedules share a due time: one check each in the same millisecond held the controller
  // for 1.15 s in the soak (docs/soak-tail.md). Each schedule's check is offset by its uid instead.
  it('spreads the checks of schedules due at the same moment over a minute, each at a stable offset', async () => {
    const checks: number[] = [];
    for (let i = 0; i < 200; i++) {
      const { s, child } = subject('2026-11-28T00:00:00Z', '2026-11-29T02:00:00Z', {}, `3f0e${i.toString(16).padStart(4, '0')}-5b1c-4c1e-9d7a-0242ac120002`);
      const h = harness({ schedule: s, child }, {}, { jobs: () => [] });
      const first = await h.reconciler.reconcileWithMove(KEY);
      checks.push(first.result.requeueAfterMs!);
      // Looked at again before its check (another change), it keeps the same check time.
      h.clock.step(30 * MINUTE);
      const again = await h.reconciler.reconcileWithMove(KEY);
      expect(again.result.requeueAfterMs).toBe(first.result.requeueAfterMs! - 30 * MINUTE);
    }
    const offsets = checks.map((ms) => ms - (65 * MINUTE + 1_000));
    expect(Math.min(...offsets)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...offsets)).toBeLessThan(MISSED_CHECK_SPREAD_MS);
    // Even: every tenth of the window holds some of the 200 (the same-millisecond herd had one value).
    const tenths = new Set(offsets.map((o) => Math.floor((o / MISSED_CHECK_SPREAD_MS) * 10)));
    expect(tenths.size).toBe(10);
  });

  it('reports no miss for a suspended schedule, one created after the due time, or a run the CronJob started late within startingDeadlineSeconds', async () => {
    const cases = [
      subject('2026-11-28T00:00:00Z', '2026-11-29T02:00:00Z', { suspend: true }),
      subject('2026-11-30T02:30:00Z', undefined),
      subject('2026-11-28T00:00:00Z', '2026-11-30T02:20:00Z', { startingDeadlineSeconds: 3600 }),
    ];
    for (const { s, child } of cases) {
      const h = harness({ schedule: s, child }, {}, { jobs: () => [] });
      h.clock.step(Date.parse('2026-11-30T02:40:00Z') - h.clock.now());
      await h.reconciler.reconcileWithMove(KEY);
      expect(h.schedules.get(KEY)?.status?.lastMissedTime).toBeUndefined();
      expect(h.events).toEqual([]);
    }
  });
});

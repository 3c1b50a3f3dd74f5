import { describe, expect, it } from 'vitest';
import { backupOutcome, exitCodeMeaning, withoutRunsBaseline, finishedRun, LAST_BACKUP_SUCCEEDED, mergeRuns, RECENT_RUNS_LIMIT, type BackupRun, type JobView } from '../../src/pure/backup-runs.ts';
import { computeStatus } from '../../src/pure/status.ts';
import { runEvents } from '../../src/controller/backupschedule/run-events.ts';

const NOW = '2026-12-01T12:00:00Z';

function succeeded(name: string, completionTime: string, startTime = completionTime): JobView {
  return { metadata: { name }, status: { startTime, completionTime, conditions: [{ type: 'Complete', status: 'True', lastTransitionTime: completionTime }] } };
}

function failed(name: string, at: string, reason: string, message: string): JobView {
  return { metadata: { name }, status: { startTime: at, conditions: [{ type: 'Failed', status: 'True', reason, message, lastTransitionTime: at }] } };
}

describe('finishedRun', () => {
  it('reads a completed Job', () => {
    expect(finishedRun(succeeded('nightly-1', '2026-12-01T01:02:00Z', '2026-12-01T01:00:00Z'))).toEqual({ job: 'nightly-1', startTime: '2026-12-01T01:00:00Z', completionTime: '2026-12-01T01:02:00Z', result: 'Succeeded' });
  });

  it('reads each failure reason, and the exit code of a PodFailurePolicy failure', () => {
    expect(finishedRun(failed('a', NOW, 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'))).toEqual({ job: 'a', startTime: NOW, completionTime: NOW, result: 'Failed', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' });
    expect(finishedRun(failed('b', NOW, 'DeadlineExceeded', 'Job was active longer than specified deadline'))?.reason).toBe('DeadlineExceeded');
    const policy = finishedRun(failed('c', NOW, 'PodFailurePolicy', 'Container backup for pod ns/c-x failed with exit code 3 matching FailJob rule at index 0'));
    expect(policy).toMatchObject({ reason: 'PodFailurePolicy', exitCode: 3 });
    expect(finishedRun(failed('d', NOW, 'PodFailurePolicy', 'Container backup for pod ns/d-x failed with exit code 4 matching FailJob rule at index 0'))?.exitCode).toBe(4);
  });

  it('says nothing of a running Job, and keeps a reason the schema would refuse out', () => {
    expect(finishedRun({ metadata: { name: 'r' }, status: { startTime: NOW } })).toBeUndefined();
    expect(finishedRun({ metadata: { name: 'r' }, status: { conditions: [{ type: 'FailureTarget', status: 'True', lastTransitionTime: NOW }] } })).toBeUndefined();
    expect(finishedRun(failed('e', NOW, 'not a reason!', 'x'))?.reason).toBe('Failed');
    expect(finishedRun(failed('f', NOW, 'Evicted', 'x'.repeat(1000)))?.message).toHaveLength(256);
  });

  it('words the exit codes of the runner', () => {
    expect(exitCodeMeaning(3)).toMatch(/incomplete/);
    expect(exitCodeMeaning(4)).toMatch(/pruning/);
    expect(exitCodeMeaning(137)).toBe('killed by signal 9');
  });
});

describe('mergeRuns', () => {
  it('keeps the stored history when the Jobs are gone, one entry per Job, newest first, at most 5', () => {
    const stored: BackupRun[] = [{ job: 'n-1', completionTime: '2026-12-01T01:00:00Z', result: 'Succeeded' }];
    const jobs = Array.from({ length: 6 }, (_, i) => succeeded(`n-${i + 2}`, `2026-12-01T0${i + 2}:00:00Z`));
    const runs = mergeRuns(stored, [succeeded('n-1', '2026-12-01T01:00:00Z'), ...jobs]);
    expect(runs.map((r) => r.job)).toEqual(['n-7', 'n-6', 'n-5', 'n-4', 'n-3']);
    expect(runs).toHaveLength(RECENT_RUNS_LIMIT);
    expect(mergeRuns(stored, [])).toEqual(stored);
  });
});

describe('backupOutcome', () => {
  it('is Unknown until a run finished, then follows the newest run, its transition time moving only with its status', () => {
    const none = backupOutcome(undefined, [], undefined, 1, NOW);
    expect(none.condition).toMatchObject({ type: LAST_BACKUP_SUCCEEDED, status: 'Unknown', reason: 'NoRunFinished', lastTransitionTime: NOW });
    const bad = backupOutcome({ conditions: [none.condition], recentRuns: [] }, [failed('n-1', '2026-12-01T12:01:00Z', 'PodFailurePolicy', 'Container backup for pod ns/n-1-x failed with exit code 3 matching FailJob rule at index 0')], undefined, 1, '2026-12-01T12:02:00Z');
    expect(bad.condition).toMatchObject({ status: 'False', reason: 'PodFailurePolicy', lastTransitionTime: '2026-12-01T12:02:00Z' });
    expect(bad.condition.message).toContain('exit code 3 (the volume archive is incomplete');
    expect(bad.lastFailedTime).toBe('2026-12-01T12:01:00Z');
    const again = backupOutcome({ conditions: [bad.condition], recentRuns: bad.recentRuns, lastFailedTime: bad.lastFailedTime }, [], undefined, 1, '2026-12-01T13:00:00Z');
    expect(again.condition).toEqual(bad.condition);
    expect(again.newRuns).toEqual([]);
  });

  it('takes lastSuccessfulTime from the Jobs when the CronJob status lacks it (Kubernetes 1.20), and the later of both otherwise', () => {
    expect(backupOutcome(undefined, [succeeded('n-1', '2026-12-01T01:00:00Z')], undefined, 1, NOW).lastSuccessfulTime).toBe('2026-12-01T01:00:00Z');
    expect(backupOutcome(undefined, [succeeded('n-1', '2026-12-01T01:00:00Z')], '2026-12-01T02:00:00Z', 1, NOW).lastSuccessfulTime).toBe('2026-12-01T02:00:00Z');
    expect(backupOutcome(undefined, [failed('n-1', '2026-12-01T01:00:00Z', 'BackoffLimitExceeded', 'm')], '2026-12-01T00:30:00Z', 1, NOW).lastSuccessfulTime).toBe('2026-12-01T00:30:00Z');
  });

  it.each([
    ['a forged later time, with a real success', [succeeded('n-1', '2026-12-01T01:00:00Z')], undefined, '2026-12-01T01:00:00Z'],
    ['a forged time while every run failed', [failed('n-1', '2026-12-01T01:00:00Z', 'BackoffLimitExceeded', 'm')], undefined, undefined],
    ['a forged time where only the CronJob knows of a success', [], '2026-11-30T02:00:00Z', '2026-11-30T02:00:00Z'],
    ['a forged success in the run history', [], undefined, undefined],
  ])('derives lastSuccessfulTime again every time, never from the stored status: %s', (_what, jobs, cronJobLastSuccess, expected) => {
    const forged = { lastSuccessfulTime: '2099-01-01T00:00:00Z', recentRuns: [{ job: 'n-0', completionTime: '2099-01-01T00:00:00Z', result: 'Succeeded' as const }] };
    expect(backupOutcome(forged, jobs, cronJobLastSuccess, 1, NOW).lastSuccessfulTime).toBe(expected);
  });
});

describe('computeStatus with Jobs', () => {
  const schedule = { metadata: { generation: 2 } };
  const child = { metadata: { name: 'nightly-backup', uid: 'u' }, status: {} };

  it('adds the runs and LastBackupSucceeded after Ready, and leaves them out without a Job cache', () => {
    const status = computeStatus(schedule, child, { kind: 'InSync' }, Date.parse(NOW), [succeeded('n-1', '2026-12-01T01:00:00Z')]);
    expect(status.conditions?.map((c) => c.type)).toEqual(['Ready', LAST_BACKUP_SUCCEEDED]);
    expect(status.recentRuns).toHaveLength(1);
    expect(status.lastSuccessfulTime).toBe('2026-12-01T01:00:00Z');
    const without = computeStatus(schedule, child, { kind: 'InSync' }, Date.parse(NOW));
    expect(without.conditions?.map((c) => c.type)).toEqual(['Ready']);
    expect(without.recentRuns).toBeUndefined();
  });
});

describe('withoutRunsBaseline', () => {
  const unknown = backupOutcome(undefined, [], undefined, 1, NOW).condition;
  const ready = { type: 'Ready', status: 'True' as const, reason: 'Ready', message: 'm', lastTransitionTime: NOW };

  it('drops the Unknown condition and empty history where the stored status never had them (an upgrade), nothing else', () => {
    expect(withoutRunsBaseline({ conditions: [ready] }, { conditions: [ready, unknown], recentRuns: [] })).toEqual({ conditions: [ready] });
    expect(withoutRunsBaseline({ conditions: [ready, unknown], recentRuns: [] }, { conditions: [ready, unknown], recentRuns: [] })).toEqual({ conditions: [ready, unknown], recentRuns: [] });
    const ran = { conditions: [ready, { ...unknown, status: 'True' as const, reason: 'Succeeded' }], recentRuns: [{ job: 'n-1', completionTime: NOW, result: 'Succeeded' as const }] };
    expect(withoutRunsBaseline({ conditions: [ready] }, ran)).toEqual(ran);
  });
});

describe('runEvents', () => {
  const run = (job: string, result: 'Succeeded' | 'Failed', at: string): BackupRun => ({ job, completionTime: at, result, ...(result === 'Failed' ? { reason: 'BackoffLimitExceeded' } : {}) });
  const cond = (status: 'True' | 'False') => ({ type: LAST_BACKUP_SUCCEEDED, status, reason: 'x', message: 'Job "n-3" succeeded at t', lastTransitionTime: NOW });

  it('a Warning per new failed run, a Normal on recovery only, nothing for a baseline without history', () => {
    const before = { recentRuns: [run('n-1', 'Succeeded', '2026-12-01T01:00:00Z')], conditions: [cond('True')] };
    const failing = { recentRuns: [run('n-2', 'Failed', '2026-12-01T02:00:00Z'), ...before.recentRuns], conditions: [cond('False')] };
    expect(runEvents(before, failing).events.map((e) => `${e.type} ${e.reason}`)).toEqual(['Warning BackupFailed']);
    const recovered = { recentRuns: [run('n-3', 'Succeeded', '2026-12-01T03:00:00Z'), ...failing.recentRuns], conditions: [cond('True')] };
    expect(runEvents(failing, recovered).events.map((e) => `${e.type} ${e.reason}`)).toEqual(['Normal BackupSucceeded']);
    const next = { recentRuns: [run('n-4', 'Succeeded', '2026-12-01T04:00:00Z'), ...recovered.recentRuns], conditions: [cond('True')] };
    expect(runEvents(recovered, next).events).toEqual([]);
    const baseline = runEvents({}, { recentRuns: [run('n-3', 'Failed', '2026-12-01T03:00:00Z'), ...failing.recentRuns] });
    expect(baseline.newRuns).toHaveLength(3);
    expect(baseline.events.map((e) => `${e.reason} ${e.message.slice(0, 9)}`)).toEqual(['BackupFailed Job "n-3"']);
    expect(runEvents({}, recovered).events).toEqual([]);
  });
});

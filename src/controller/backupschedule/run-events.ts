/**
 * The Events a status write announces about backup runs: a Warning `BackupFailed` for each failed run
 * the write adds to `status.recentRuns`, a Normal `BackupSucceeded` when `LastBackupSucceeded` turns
 * True after False (a recovery; a success after a success says nothing new), a Warning `BackupMissed`
 * when `lastMissedTime` moves (a run due and never started). Derived from the stored
 * and the written status, so an Event follows a run once, whatever resyncs and restarts happen.
 */
import { describeFailure, LAST_BACKUP_SUCCEEDED, type BackupRun } from '../../pure/backup-runs.ts';
import type { ScheduleStatus } from '../../pure/status.ts';
import type { EventType } from '../event-recorder.ts';

/** One Event to record on the schedule. */
export interface RunEvent {
  readonly type: EventType;
  readonly reason: 'BackupFailed' | 'BackupSucceeded' | 'BackupMissed';
  readonly message: string;
}

/**
 * The runs `after` adds to `before`'s history and the Events they call for. A `before` without any
 * history (a schedule last written by a release that did not track runs) sets the baseline: its runs
 * count as new for the metrics' counters, and only the newest, if it failed, is announced, so an
 * upgrade does not replay every old failure the Jobs still show.
 */
export function runEvents(before: ScheduleStatus | undefined, after: ScheduleStatus): { readonly newRuns: BackupRun[]; readonly events: RunEvent[] } {
  const runs = runsEvents(before, after);
  if (after.lastMissedTime === undefined || after.lastMissedTime === before?.lastMissedTime) return runs;
  const missed: RunEvent = { type: 'Warning', reason: 'BackupMissed', message: `the backup due at ${after.lastMissedTime} was not started in time (startingDeadlineSeconds, or 5 minutes without one, passed with no Job scheduled): is kube-controller-manager running, or the schedule suspended meanwhile?` };
  return { newRuns: runs.newRuns, events: [...runs.events, missed] };
}

function runsEvents(before: ScheduleStatus | undefined, after: ScheduleStatus): { readonly newRuns: BackupRun[]; readonly events: RunEvent[] } {
  const known = new Set((before?.recentRuns ?? []).map((r) => r.job));
  const newRuns = (after.recentRuns ?? []).filter((r) => !known.has(r.job));
  if (before?.recentRuns === undefined) {
    // No history yet: announce the newest run only if it failed, not every failure the Jobs still show.
    const newest = newRuns[0];
    return { newRuns, events: newest?.result === 'Failed' ? [{ type: 'Warning', reason: 'BackupFailed', message: describeFailure(newest) }] : [] };
  }
  // Oldest first, as they happened.
  const events: RunEvent[] = newRuns
    .filter((r) => r.result === 'Failed')
    .reverse()
    .map((run) => ({ type: 'Warning', reason: 'BackupFailed', message: describeFailure(run) }));
  const was = before.conditions?.find((c) => c.type === LAST_BACKUP_SUCCEEDED);
  const now = after.conditions?.find((c) => c.type === LAST_BACKUP_SUCCEEDED);
  if (was?.status === 'False' && now?.status === 'True') events.push({ type: 'Normal', reason: 'BackupSucceeded', message: `${now.message}, after a failed backup` });
  return { newRuns, events };
}

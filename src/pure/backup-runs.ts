/**
 * How the backups went, as a pure function of the child CronJob's Jobs the controller has cached and
 * the status it wrote before: the last runs (a short history that outlives the Jobs the CronJob's
 * history limits delete), `lastSuccessfulTime`, `lastFailedTime` and the `LastBackupSucceeded`
 * condition. Only the Job's own status is read (its `Complete`/`Failed` condition, the reason and
 * message the Job controller wrote, the exit code a `PodFailurePolicy` failure names): never its Pods
 * (docs/backup-outcomes.md says why). Deterministic, like src/pure/status.ts: the same Jobs and the same
 * stored status give the same result, so a converged schedule is never written again.
 */
import type { BackupRun, Condition } from '../api/index.ts';
import { EXIT_INCOMPLETE, EXIT_PRUNE_FAILED } from './backup-contract.ts';

export type { BackupRun };

/** The condition type saying whether the last finished backup succeeded. */
export const LAST_BACKUP_SUCCEEDED = 'LastBackupSucceeded';

/** How many finished runs `status.recentRuns` keeps (newest first). */
export const RECENT_RUNS_LIMIT = 5;

/** Longest Job failure message kept in a run (the Job controller's messages are one sentence). */
export const RUN_MESSAGE_LIMIT = 256;

/** Reasons of {@link LAST_BACKUP_SUCCEEDED} besides the Job's own failure reasons (BackoffLimitExceeded, DeadlineExceeded, PodFailurePolicy…). */
export const LastBackupReason = {
  /** The last finished Job completed. */
  Succeeded: 'Succeeded',
  /** No Job of this schedule has finished yet (or none the controller saw). */
  NoRunFinished: 'NoRunFinished',
  /** A Job failed without a reason (an older Job controller). */
  Failed: 'Failed',
} as const;

/** The parts of a Job this module reads (what the controller's Job cache keeps, src/controller/backupschedule/job-cache.ts). */
export interface JobView {
  readonly metadata: { readonly name?: string };
  readonly status?: {
    readonly startTime?: string;
    readonly completionTime?: string;
    readonly conditions?: readonly { readonly type?: string; readonly status?: string; readonly reason?: string; readonly message?: string; readonly lastTransitionTime?: string }[];
  };
}

/** What the backup runner's exit codes mean (src/pure/backup-contract.ts). */
export function exitCodeMeaning(code: number): string {
  switch (code) {
    case 1:
      return 'the backup failed';
    case 2:
      return 'the runner was given bad arguments';
    case EXIT_INCOMPLETE:
      return 'the volume archive is incomplete: files changed while they were read';
    case EXIT_PRUNE_FAILED:
      return 'the backup was written and verified, but pruning old backups failed';
    default:
      return code > 128 ? `killed by signal ${code - 128}` : 'an exit code the runner does not use';
  }
}

const EXIT_CODE = /\bexit code (\d{1,3})\b/;
/** A condition reason as the schema accepts it (metav1.Condition's pattern, 128 characters for a run). */
const REASON = /^[A-Za-z]([A-Za-z0-9_,:]{0,126}[A-Za-z0-9_])?$/;

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The finished run a Job records, or undefined while it runs (or lacks a name). */
export function finishedRun(job: JobView): BackupRun | undefined {
  const name = job.metadata.name;
  if (!name || name.length > 63) return undefined;
  const conditions = job.status?.conditions ?? [];
  const startTime = job.status?.startTime;
  const complete = conditions.find((c) => c.type === 'Complete' && c.status === 'True');
  if (complete) {
    const completionTime = job.status?.completionTime ?? complete.lastTransitionTime;
    if (!completionTime) return undefined;
    return { job: name, ...(startTime ? { startTime } : {}), completionTime, result: 'Succeeded' };
  }
  const failed = conditions.find((c) => c.type === 'Failed' && c.status === 'True');
  if (!failed?.lastTransitionTime) return undefined;
  const message = failed.message ?? '';
  const code = failed.reason === 'PodFailurePolicy' ? EXIT_CODE.exec(message)?.[1] : undefined;
  const exitCode = code !== undefined && Number(code) <= 255 ? Number(code) : undefined;
  return {
    job: name,
    ...(startTime ? { startTime } : {}),
    completionTime: failed.lastTransitionTime,
    result: 'Failed',
    // A reason outside the schema's pattern (another writer of Job status) would make the status unwritable.
    reason: failed.reason !== undefined && REASON.test(failed.reason) ? failed.reason : LastBackupReason.Failed,
    ...(exitCode !== undefined ? { exitCode } : {}),
    ...(message ? { message: clip(message, RUN_MESSAGE_LIMIT) } : {}),
  };
}

/** Newest first: by completion time, then by Job name (the CronJob's names grow with the scheduled time). */
function newestFirst(a: BackupRun, b: BackupRun): number {
  const byTime = Date.parse(b.completionTime) - Date.parse(a.completionTime);
  if (byTime !== 0 && !Number.isNaN(byTime)) return byTime;
  return a.job < b.job ? 1 : a.job > b.job ? -1 : 0;
}

/** The stored runs and the cached Jobs' finished runs, one per Job (the cached one wins), newest first, at most `limit`. */
export function mergeRuns(stored: readonly BackupRun[], jobs: readonly JobView[], limit = RECENT_RUNS_LIMIT): BackupRun[] {
  const byJob = new Map<string, BackupRun>();
  for (const run of stored) byJob.set(run.job, run);
  for (const job of jobs) {
    const run = finishedRun(job);
    if (run) byJob.set(run.job, run);
  }
  return [...byJob.values()].sort(newestFirst).slice(0, limit);
}

/** The later of two RFC 3339 times (either may be missing). */
function later(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Date.parse(b) > Date.parse(a) ? b : a;
}

/** A run's failure in words: the Job's reason, the exit code and what it means, the Job controller's message. */
export function describeFailure(run: BackupRun): string {
  const parts = [`Job "${run.job}" failed at ${run.completionTime}: ${run.reason ?? LastBackupReason.Failed}`];
  if (run.exitCode !== undefined) parts.push(`exit code ${run.exitCode} (${exitCodeMeaning(run.exitCode)})`);
  if (run.message) parts.push(run.message);
  return parts.join('; ');
}

/** The previous status this module reads. */
export interface RunsSubject {
  readonly recentRuns?: readonly BackupRun[];
  readonly lastMissedTime?: string;
  readonly lastSuccessfulTime?: string;
  readonly lastFailedTime?: string;
  readonly conditions?: readonly Condition[];
}

/** The backup-outcome part of the status. */
export interface BackupOutcome {
  readonly recentRuns: BackupRun[];
  readonly lastSuccessfulTime: string | undefined;
  readonly lastFailedTime: string | undefined;
  /** The due time of the newest run that was never started (src/pure/missed-runs.ts). */
  readonly lastMissedTime: string | undefined;
  readonly condition: Condition;
  /** Runs in `recentRuns` the previous status did not list (what Events and counters report). */
  readonly newRuns: BackupRun[];
}

/**
 * The outcome part of the status from the previous one, the child's cached Jobs and the CronJob's own
 * `lastSuccessfulTime`. `lastSuccessfulTime` is derived every time, as Ready is, from what only
 * kube-controller-manager writes: the later of the CronJob's (absent before Kubernetes 1.21) and the
 * newest completion of its cached Jobs; never from the stored status, which whoever may write `/status`
 * could have set to silence the staleness alert (issue 41). `now` stamps `lastTransitionTime` only
 * when the condition's status changes. `missedDue` is the due time of a run missed now
 * (src/pure/missed-runs.ts); `lastMissedTime` keeps the newest.
 */
export function backupOutcome(previous: RunsSubject | undefined, jobs: readonly JobView[], cronJobLastSuccess: string | undefined, generation: number | undefined, now: string, missedDue?: string): BackupOutcome {
  const stored = previous?.recentRuns ?? [];
  const recentRuns = mergeRuns(stored, jobs);
  const storedJobs = new Set(stored.map((r) => r.job));
  const newRuns = recentRuns.filter((r) => !storedJobs.has(r.job));
  let lastSuccessfulTime = cronJobLastSuccess;
  for (const job of jobs) {
    const run = finishedRun(job);
    if (run?.result === 'Succeeded') lastSuccessfulTime = later(lastSuccessfulTime, run.completionTime);
  }
  let lastFailedTime = previous?.lastFailedTime;
  for (const run of recentRuns) if (run.result === 'Failed') lastFailedTime = later(lastFailedTime, run.completionTime);
  const latest = recentRuns[0];
  const state: Pick<Condition, 'status' | 'reason' | 'message'> =
    latest === undefined
      ? { status: 'Unknown', reason: LastBackupReason.NoRunFinished, message: 'no backup Job of this schedule has finished yet' }
      : latest.result === 'Succeeded'
        ? { status: 'True', reason: LastBackupReason.Succeeded, message: `Job "${latest.job}" succeeded at ${latest.completionTime}` }
        : { status: 'False', reason: latest.reason ?? LastBackupReason.Failed, message: describeFailure(latest) };
  const before = previous?.conditions?.find((c) => c.type === LAST_BACKUP_SUCCEEDED);
  const condition: Condition = {
    type: LAST_BACKUP_SUCCEEDED,
    ...state,
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    lastTransitionTime: before && before.status === state.status ? before.lastTransitionTime : now,
  };
  return { recentRuns, lastSuccessfulTime, lastFailedTime, lastMissedTime: later(previous?.lastMissedTime, missedDue), condition, newRuns };
}

/**
 * `computed` less what only states "no run seen yet" where `stored` says nothing of runs: the
 * Unknown/NoRunFinished condition and an empty `recentRuns`. A schedule written by a release that did
 * not track runs (an upgrade) is then not rewritten just to say so: it gets the fields with its next
 * status write (a run finishing, a new generation), and a new schedule with its first one.
 */
export function withoutRunsBaseline<S extends RunsSubject>(stored: RunsSubject | undefined, computed: S): S {
  if (stored?.recentRuns !== undefined || stored?.conditions?.some((c) => c.type === LAST_BACKUP_SUCCEEDED)) return computed;
  if ((computed.recentRuns?.length ?? 0) > 0) return computed;
  const { recentRuns: _, ...rest } = computed;
  return { ...rest, conditions: computed.conditions?.filter((c) => !(c.type === LAST_BACKUP_SUCCEEDED && c.reason === LastBackupReason.NoRunFinished)) } as S;
}

/**
 * The status of a Restore from what the controller sees: its Job (or none yet), or the reason no Job
 * can be made. Pure: the controller writes the result when it differs from the stored status. A
 * condition keeps its lastTransitionTime while its status stays the same, as metav1.Condition asks.
 */
import type { RestoreStatus } from '../../imports/restore.ts';

/** Why a Restore has no Job (and will not get one until its spec or the world changes). */
export interface Blocked {
  /** Terminal (Failed) or waiting (Pending, e.g. the BackupSchedule does not exist yet). */
  readonly phase: 'Failed' | 'Pending';
  readonly reason: string;
  readonly message: string;
  /** The Job it had, when it had one: deleted before it ended. @default none */
  readonly jobName?: string;
}

/**
 * How the runner ended, as the controller read it from the Job's Pod (src/controller/restore/runner-pod.ts):
 * its validated report, or why there is none.
 */
export interface RunnerView {
  readonly report?: RunnerReport;
  readonly problem?: string;
}

/** The backup the runner verified, every field present. */
export type ReportedBackup = Required<Pick<NonNullable<RestoreStatus['backup']>, 'name' | 'time' | 'size' | 'sha256'>>;

/** The runner's termination message, validated (src/controller/restore/runner-report.ts parses it). */
export interface RunnerReport {
  /** The runner's exit code (0 restored, 1 failed while writing, 2 usage, 5 refused). */
  readonly exitCode: number;
  /** The runner's one-line account of the run (control characters replaced by spaces). */
  readonly message: string;
  /** The backup the runner chose and verified: on success, and on a failure while writing. */
  readonly backup?: ReportedBackup;
}

/** The Job fields the status reads. */
export interface JobView {
  readonly metadata: { readonly name?: string };
  readonly status?: {
    readonly active?: number;
    readonly conditions?: readonly { readonly type: string; readonly status: string; readonly reason?: string; readonly message?: string }[];
  };
}

type Condition = NonNullable<RestoreStatus['conditions']>[number];

/** metav1.Condition's message maxLength. */
const MAX_CONDITION_MESSAGE = 32768;

/** `conditions` with `next` set, its lastTransitionTime kept when its status did not change. */
function withCondition(previous: readonly Condition[] | undefined, next: Omit<Condition, 'lastTransitionTime'>, now: string): Condition[] {
  const old = previous?.find((c) => c.type === next.type);
  const condition = { ...next, lastTransitionTime: old !== undefined && old.status === next.status ? old.lastTransitionTime : now };
  return [condition];
}

/**
 * The desired status: `blocked` when no Job can run, else from `job` (undefined: not created yet).
 * A Restore that ended (Succeeded or Failed) stays so, even when its Job is deleted later: it never runs twice.
 * `runner` is read once the Job has ended: its backup becomes `status.backup`, its message goes into the
 * condition, and a problem reading it is named there instead.
 */
export function computeRestoreStatus(current: RestoreStatus | undefined, generation: number | undefined, jobName: string, job: JobView | undefined, blocked: Blocked | undefined, now: string, runner?: RunnerView): RestoreStatus {
  const base = { ...(generation === undefined ? {} : { observedGeneration: generation }) };
  // Ended: a Restore runs once (its spec is immutable), whatever happens to its Job afterwards.
  if (current?.phase === 'Succeeded' || current?.phase === 'Failed') return { ...current };
  if (blocked !== undefined) {
    return { ...base, phase: blocked.phase, ...(blocked.jobName === undefined ? {} : { jobName: blocked.jobName }), conditions: withCondition(current?.conditions, { type: blocked.phase === 'Failed' ? 'Failed' : 'Ready', status: blocked.phase === 'Failed' ? 'True' : 'False', reason: blocked.reason, message: blocked.message }, now) };
  }
  if (job === undefined) return { ...base, phase: 'Pending', jobName, conditions: withCondition(current?.conditions, { type: 'Ready', status: 'True', reason: 'JobCreating', message: `creating restore Job ${jobName}` }, now) };
  const end = jobEnd(job);
  const report = runner?.report;
  const backup = report?.backup ?? current?.backup;
  const withBackup = backup === undefined ? {} : { backup: { ...backup } };
  if (end?.type === 'Complete') {
    const said = report ? `: ${report.message}` : runner?.problem ? `; status.backup is unknown: ${runner.problem}` : '';
    return { ...base, phase: 'Succeeded', jobName, ...withBackup, conditions: withCondition(current?.conditions, { type: 'Complete', status: 'True', reason: 'JobComplete', message: cut(`restore Job ${jobName} completed${said}`) }, now) };
  }
  if (end?.type === 'Failed') {
    const said = report ? `; the runner exited ${report.exitCode}: ${report.message}` : runner?.problem ? `; no report from the runner: ${runner.problem}` : '';
    const message = `restore Job ${jobName} failed${end.reason ? ` (${end.reason})` : ''}${end.message ? `: ${end.message}` : ''}${said}; kubectl logs job/${jobName} has the details (exit 5: refused before writing, 1: failed while writing)`;
    return { ...base, phase: 'Failed', jobName, ...withBackup, conditions: withCondition(current?.conditions, { type: 'Failed', status: 'True', reason: 'JobFailed', message: cut(message) }, now) };
  }
  const running = (job.status?.active ?? 0) > 0;
  return { ...base, phase: running ? 'Running' : 'Pending', jobName, conditions: withCondition(current?.conditions, { type: 'Ready', status: 'True', reason: running ? 'JobRunning' : 'JobPending', message: `restore Job ${jobName} ${running ? 'is running' : 'is waiting for its Pod'}` }, now) };
}

/** A condition message within the schema's maxLength. */
function cut(message: string): string {
  return message.slice(0, MAX_CONDITION_MESSAGE);
}

/** The Job's terminal condition (Complete or Failed), if it ended. */
export function jobEnd(job: JobView): { type: string; reason?: string; message?: string } | undefined {
  return job.status?.conditions?.find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
}

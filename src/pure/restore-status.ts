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

/** `conditions` with `next` set, its lastTransitionTime kept when its status did not change. */
function withCondition(previous: readonly Condition[] | undefined, next: Omit<Condition, 'lastTransitionTime'>, now: string): Condition[] {
  const old = previous?.find((c) => c.type === next.type);
  const condition = { ...next, lastTransitionTime: old !== undefined && old.status === next.status ? old.lastTransitionTime : now };
  return [condition];
}

/**
 * The desired status: `blocked` when no Job can run, else from `job` (undefined: not created yet).
 * A Restore that ended (Succeeded or Failed) stays so, even when its Job is deleted later: it never runs twice.
 */
export function computeRestoreStatus(current: RestoreStatus | undefined, generation: number | undefined, jobName: string, job: JobView | undefined, blocked: Blocked | undefined, now: string): RestoreStatus {
  const base = { ...(generation === undefined ? {} : { observedGeneration: generation }) };
  // Ended: a Restore runs once (its spec is immutable), whatever happens to its Job afterwards.
  if (current?.phase === 'Succeeded' || current?.phase === 'Failed') return { ...current };
  if (blocked !== undefined) {
    return { ...base, phase: blocked.phase, conditions: withCondition(current?.conditions, { type: blocked.phase === 'Failed' ? 'Failed' : 'Ready', status: blocked.phase === 'Failed' ? 'True' : 'False', reason: blocked.reason, message: blocked.message }, now) };
  }
  if (job === undefined) return { ...base, phase: 'Pending', jobName, conditions: withCondition(current?.conditions, { type: 'Ready', status: 'True', reason: 'JobCreating', message: `creating restore Job ${jobName}` }, now) };
  const end = ended(job);
  if (end?.type === 'Complete') return { ...base, phase: 'Succeeded', jobName, ...(current?.backup ? { backup: current.backup } : {}), conditions: withCondition(current?.conditions, { type: 'Complete', status: 'True', reason: 'JobComplete', message: `restore Job ${jobName} completed` }, now) };
  if (end?.type === 'Failed') {
    const message = `restore Job ${jobName} failed${end.reason ? ` (${end.reason})` : ''}${end.message ? `: ${end.message}` : ''}; kubectl logs job/${jobName} says why (exit 5: refused before writing, 1: failed while writing)`;
    return { ...base, phase: 'Failed', jobName, conditions: withCondition(current?.conditions, { type: 'Failed', status: 'True', reason: 'JobFailed', message: message.slice(0, 32768) }, now) };
  }
  const running = (job.status?.active ?? 0) > 0;
  return { ...base, phase: running ? 'Running' : 'Pending', jobName, conditions: withCondition(current?.conditions, { type: 'Ready', status: 'True', reason: running ? 'JobRunning' : 'JobPending', message: `restore Job ${jobName} ${running ? 'is running' : 'is waiting for its Pod'}` }, now) };
}

/** The Job's terminal condition, if it ended. */
function ended(job: JobView): { type: string; reason?: string; message?: string } | undefined {
  return job.status?.conditions?.find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
}

/**
 * Reads how a finished restore Job's runner ended from its Pod: the terminated `restore` container's
 * termination message (the runner has no API credentials, so this is the only way out of the Pod).
 *
 * One LIST of Pods per finished Restore, in its namespace, selected by the Job's uid and capped at a few
 * Pods: no Pod informer and no watch, so the controller never caches (or streams) the cluster's Pods.
 * The price is the RBAC rule `pods: list` (docs/restore.md, "Reading the runner's report").
 */
import type { KubeObject } from '../../kube/object.ts';
import { isForbidden } from '../../kube/api-status-error.ts';
import { RESTORE_CONTAINER_NAME } from '../../pure/restore-contract.ts';
import type { RunnerView } from '../../pure/restore-status.ts';
import { oneLine, parseRunnerReport, reportContradiction } from './runner-report.ts';

/**
 * The label the Job controller puts on its Pods with the Job's uid: `controller-uid` since Kubernetes
 * 1.20 and still set beside 1.27's `batch.kubernetes.io/controller-uid`, so every supported release has it.
 */
export const JOB_UID_LABEL = 'controller-uid';
/**
 * Pods one LIST returns at most. A restore Job (backoffLimit 0) has one Pod; a second comes only from a
 * replaced Pod (eviction, node loss) or from someone creating Pods with the Job's labels.
 */
export const RUNNER_POD_LIST_LIMIT = 5;

/** One LIST of Pods: the namespace, a label selector and a page size. */
export type ListPods = (request: { readonly namespace: string; readonly labelSelector: string; readonly limit: number }) => Promise<{ readonly items: readonly unknown[] }>;

/** What the report is checked against: the Restore's spec.backup and spec.from.backupScheduleName. */
export interface ReportContext {
  readonly backup: string;
  readonly schedule?: string;
}

/** The terminated runner container of one Pod, as far as it is read. */
interface Terminated {
  readonly pod: string;
  readonly created: string;
  readonly finished: string;
  readonly exitCode: number;
  readonly reason: string | undefined;
  readonly message: string;
}

const record = (value: unknown): Readonly<Record<string, unknown>> | undefined => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined);
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** The runner container's terminated state in `item`, if it is a Pod the Job `jobUid` controls. */
function terminatedRunner(item: unknown, jobUid: string): Terminated | undefined {
  const pod = record(item);
  const meta = record(pod?.['metadata']);
  const owners = meta?.['ownerReferences'];
  // The selector is only a label anyone creating Pods can set; the Job controller also owns its Pods.
  if (!Array.isArray(owners) || !owners.some((o) => record(o)?.['controller'] === true && record(o)?.['kind'] === 'Job' && record(o)?.['uid'] === jobUid)) return undefined;
  const statuses = record(pod?.['status'])?.['containerStatuses'];
  if (!Array.isArray(statuses)) return undefined;
  const container = statuses.map(record).find((s) => s?.['name'] === RESTORE_CONTAINER_NAME);
  const terminated = record(record(container?.['state'])?.['terminated']);
  const exitCode = terminated?.['exitCode'];
  if (terminated === undefined || typeof exitCode !== 'number' || !Number.isInteger(exitCode)) return undefined;
  return {
    pod: text(meta?.['name']) ?? '',
    created: text(meta?.['creationTimestamp']) ?? '',
    finished: text(terminated['finishedAt']) ?? '',
    exitCode,
    reason: text(terminated['reason']),
    // Absent when the container wrote nothing: the parser says so.
    message: text(terminated['message']) ?? '',
  };
}

/** Newest first: created, then finished (RFC 3339 UTC strings order as times), then name. */
function newestFirst(a: Terminated, b: Terminated): number {
  return b.created.localeCompare(a.created) || b.finished.localeCompare(a.finished) || b.pod.localeCompare(a.pod);
}

/**
 * The runner's report from the newest Pod of `job` whose restore container terminated, checked against
 * `context`; or the problem (no such Pod, Pods not readable, an invalid or contradicting message). Throws
 * only what a retry may cure (the API server unreachable, 5xx, 429); a 403 is a problem: RBAC without
 * `pods: list` is not fixed by retrying.
 */
export async function readRunnerReport(listPods: ListPods, job: KubeObject, context: ReportContext): Promise<RunnerView> {
  const { namespace = '', name = '', uid } = job.metadata;
  if (uid === undefined || uid === '') return { problem: `Job ${namespace}/${name} has no uid to find its Pods by` };
  let items: readonly unknown[];
  try {
    ({ items } = await listPods({ namespace, labelSelector: `${JOB_UID_LABEL}=${uid}`, limit: RUNNER_POD_LIST_LIMIT }));
  } catch (err) {
    if (isForbidden(err)) return { problem: `the operator may not list Pods in ${namespace} (its ClusterRole lacks pods: list; apply this release's dist/)` };
    throw err;
  }
  const found = items.map((item) => terminatedRunner(item, uid)).filter((t): t is Terminated => t !== undefined).sort(newestFirst);
  const newest = found[0];
  if (newest === undefined) return { problem: `no Pod of Job ${name} with a terminated ${RESTORE_CONTAINER_NAME} container among the first ${RUNNER_POD_LIST_LIMIT} listed (deleted, or still terminating)` };
  const where = `the termination message of Pod ${newest.pod}`;
  const parsed = parseRunnerReport(newest.message);
  if ('problem' in parsed) {
    const exited = `container exited ${newest.exitCode}${newest.reason ? ` (${oneLine(newest.reason).slice(0, 64)})` : ''}`;
    return { problem: `${where} is invalid: ${parsed.problem}; the ${exited}` };
  }
  const contradiction = reportContradiction(parsed.report, { ...context, containerExitCode: newest.exitCode });
  if (contradiction !== undefined) return { problem: `${where} is refused: ${contradiction}` };
  return { report: parsed.report };
}

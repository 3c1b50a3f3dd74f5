/**
 * The backup Jobs in the controller's cache: selected by the label every child CronJob's Job template
 * carries, and stripped to what src/pure/backup-runs.ts reads (name, owner, start and completion
 * times, the terminal conditions), so a Job costs a few hundred bytes whatever its spec holds.
 */
import { controllerOf, type KubeObject, type ObjectMeta, type OwnerReference } from '../../kube/object.ts';
import { LABEL_MANAGED_BY, OPERATOR_NAME } from '../../pure/labels.ts';
import { RUN_MESSAGE_LIMIT } from '../../pure/backup-runs.ts';

/**
 * The Job informer's selector: the child CronJobs' Job template carries the operator's labels
 * (src/pure/labels.ts), so only backup Jobs are listed, watched and cached.
 */
export const JOB_SELECTOR = `${LABEL_MANAGED_BY}=${OPERATOR_NAME}`;

/** The terminal Job conditions; the others (Suspended, FailureTarget, SuccessCriteriaMet) are not kept. */
const TERMINAL = new Set(['Complete', 'Failed']);

const MAX_SHORT = 128;

function short(value: unknown, max = MAX_SHORT): string | undefined {
  return typeof value === 'string' && value.length <= max ? value : undefined;
}

interface JobStatusView {
  readonly startTime?: unknown;
  readonly completionTime?: unknown;
  readonly conditions?: readonly Record<string, unknown>[];
}

/** The controller owner of a cached Job, when it is a CronJob (the backup Jobs' owner). */
export function ownerCronJobName(job: KubeObject): string | undefined {
  const owner = controllerOf(job.metadata);
  return owner?.kind === 'CronJob' && owner.apiVersion.startsWith('batch/') ? owner.name : undefined;
}

/** The cache transform of Jobs: see the module doc. */
export function stripJob<T extends KubeObject>(obj: T): T {
  const metadata: ObjectMeta = {};
  for (const field of ['name', 'namespace', 'uid', 'resourceVersion'] as const) if (obj.metadata[field] !== undefined) metadata[field] = obj.metadata[field];
  const owner = controllerOf(obj.metadata);
  if (owner) {
    const { apiVersion, kind, name, uid } = owner;
    const kept: OwnerReference = { apiVersion, kind, name, uid, controller: true };
    metadata.ownerReferences = [kept];
  }
  const status = (obj as KubeObject & { status?: JobStatusView }).status;
  const view: Record<string, unknown> = {};
  const startTime = short(status?.startTime);
  const completionTime = short(status?.completionTime);
  if (startTime) view['startTime'] = startTime;
  if (completionTime) view['completionTime'] = completionTime;
  const conditions = Array.isArray(status?.conditions)
    ? status.conditions
        .filter((c) => typeof c === 'object' && c !== null && TERMINAL.has(String(c['type'])))
        .map((c) => {
          const message = typeof c['message'] === 'string' ? c['message'].slice(0, RUN_MESSAGE_LIMIT + 1) : undefined;
          return { type: c['type'], status: short(c['status']), reason: short(c['reason']), lastTransitionTime: short(c['lastTransitionTime']), ...(message !== undefined ? { message } : {}) };
        })
    : [];
  if (conditions.length > 0) view['conditions'] = conditions;
  const kept: KubeObject & Record<string, unknown> = { metadata, status: view };
  if (obj.apiVersion !== undefined) kept.apiVersion = obj.apiVersion;
  if (obj.kind !== undefined) kept.kind = obj.kind;
  return kept as T;
}

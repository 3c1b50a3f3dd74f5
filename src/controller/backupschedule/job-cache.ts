/**
 * The Jobs in the controller's cache, one informer both controllers share: selected by the label the
 * child CronJobs' Job template and the restore Jobs carry, and stripped to what src/pure/backup-runs.ts
 * and src/pure/restore-status.ts read (name, uid, owner, start and completion times, the number of
 * active Pods, one terminal condition of each type), so a Job costs a few hundred bytes whatever its
 * spec holds.
 */
import { controllerOf, type KubeObject, type ObjectMeta } from '../../kube/object.ts';
import { LABEL_MANAGED_BY, OPERATOR_NAME } from '../../pure/labels.ts';
import { RUN_MESSAGE_LIMIT } from '../../pure/backup-runs.ts';
import type { CachePolicy } from '../../runtime/cache-policy.ts';
import { boundedControllerRef } from './event-mapping.ts';

/**
 * The Job informer's selector: the child CronJobs' Job template and the restore Jobs carry the
 * operator's labels (src/pure/labels.ts, src/pure/restore-job.ts), so only those Jobs (and any a user
 * labels so) are listed, watched and cached.
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
  readonly active?: unknown;
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
  const owner = boundedControllerRef(obj.metadata);
  if (owner) {
    const { apiVersion, kind, name, uid } = owner;
    metadata.ownerReferences = [{ apiVersion, kind, name, uid, controller: true }];
  }
  const status = (obj as KubeObject & { status?: JobStatusView }).status;
  const view: Record<string, unknown> = {};
  const startTime = short(status?.startTime);
  const completionTime = short(status?.completionTime);
  if (startTime) view['startTime'] = startTime;
  if (completionTime) view['completionTime'] = completionTime;
  if (typeof status?.active === 'number') view['active'] = status.active;
  // The first true condition of each terminal type, which is all the readers look for: a Job ends once.
  const seen = new Set<string>();
  const conditions = Array.isArray(status?.conditions)
    ? status.conditions
        .filter((c) => typeof c === 'object' && c !== null && typeof c['type'] === 'string' && TERMINAL.has(c['type']) && c['status'] === 'True' && !seen.has(c['type']) && seen.add(c['type']))
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

/** What the Job cache keeps ({@link stripJob}): at most ~2.5 KB a Job by construction, so the budget is never reached. */
export const JOB_CACHE: CachePolicy<KubeObject> = { transform: stripJob, maxObjectBytes: 4 * 1024 };

/**
 * Finding the child CronJob for one reconcile: the cache first (it holds only the operator's children,
 * selected by label); a create when it has none; one GET when the create answers AlreadyExists (the
 * cache is behind, kuberay#715, or the CronJob is outside the watch: a child whose labels were removed,
 * an orphan, a foreign CronJob) or when the cached CronJob is not controlled by the schedule or is a
 * stub (the cache keeps no spec of it, and its owners may be behind: src/controller/backupschedule/event-mapping.ts);
 * then whose it is (src/pure/child-claim.ts).
 * Never a second create.
 */
import { claimChild, type ChildClaim } from '../../pure/child-claim.ts';
import { isAlreadyExists, isNotFound, writeErrorDisposition } from '../../kube/api-status-error.ts';
import { objectKey, type KubeObject } from '../../kube/object.ts';
import { cachedWhole } from './event-mapping.ts';
import type { CacheReader, ChildRef, ReconcilerWrites } from './reconciler-options.ts';
import type { BackupScheduleObject } from '../resources.ts';

/** What {@link lookUpChild} found or did. */
export type ChildLookup =
  /** There was none: it was created; `stored` is the server's answer. */
  | { readonly kind: 'created'; readonly stored: KubeObject }
  /** A CronJob with the child's name, from the cache or the API, and whose it is. */
  | { readonly kind: 'found'; readonly child: KubeObject; readonly claim: ChildClaim }
  /** The API server refused the create for good (403, 422…: `writeErrorDisposition`). */
  | { readonly kind: 'createRejected'; readonly err: unknown }
  /** The GET found nothing: deleted since; look again with backoff. */
  | { readonly kind: 'gone' };

/** Where the CronJob `desired` lives. */
export function childRefOf(desired: KubeObject): ChildRef {
  return { namespace: desired.metadata.namespace ?? '', name: desired.metadata.name ?? '' };
}

/** See the module doc. Other API errors are thrown (rate-limited retry). */
export async function lookUpChild(
  schedule: BackupScheduleObject,
  desired: KubeObject,
  cache: CacheReader<KubeObject>,
  api: Pick<ReconcilerWrites, 'createCronJob' | 'getCronJob'>,
): Promise<ChildLookup> {
  const ref = childRefOf(desired);
  let child = cache.get(objectKey(ref));
  if (!child) {
    try {
      return { kind: 'created', stored: await api.createCronJob(desired) };
    } catch (err) {
      if (writeErrorDisposition(err, 'create') === 'terminal') return { kind: 'createRejected', err };
      if (!isAlreadyExists(err)) throw err;
    }
    child = await getLiveChild(api, ref);
  } else if (!cachedWhole(child) || claimChild(schedule, child).kind !== 'owned') {
    child = await getLiveChild(api, ref);
  }
  return child ? { kind: 'found', child, claim: claimChild(schedule, child) } : { kind: 'gone' };
}

/** The CronJob as the API server has it now, or undefined when it is gone (404). */
export async function getLiveChild(api: Pick<ReconcilerWrites, 'getCronJob'>, ref: ChildRef): Promise<KubeObject | undefined> {
  try {
    return await api.getCronJob(ref);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

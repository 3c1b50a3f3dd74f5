/**
 * The child CronJob's writes as JSON merge patches (RFC 7386), computed from two views of the same
 * object: the observed one (often the informer's cache, which keeps only what reconcile reads: see
 * src/controller/backupschedule/event-mapping.ts) and the healed one (`mergeDesiredIntoObserved`, or the image policy's
 * suspended copy). A PUT of a cached object would delete whatever the cache dropped (other writers'
 * labels and annotations); a merge patch touches only what it names, so foreign metadata survives.
 *
 * What the patch names:
 * - every top-level field but metadata/status that differs: nested objects key by key, `null` for a key
 *   the healed object no longer has, lists replaced whole (RFC 7386 has no list merge; the controller
 *   owns the child's whole spec anyway);
 * - our labels and annotations whose values differ (other keys are left as they are);
 * - the full `ownerReferences` list when it differs (a list, so replaced whole: ours and the others');
 * - `metadata.resourceVersion` of the observed object, a precondition: the API server answers 409
 *   Conflict when the object changed since, as for a PUT, and reconcile retries from a fresh cache.
 */
import jsonMergePatch from 'json-merge-patch';
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject, ObjectMeta } from '../kube/object.ts';

/** A JSON merge patch of a CronJob (`application/merge-patch+json`). */
export interface ChildMergePatch {
  readonly metadata: { readonly resourceVersion?: string } & Partial<Pick<ObjectMeta, 'labels' | 'annotations' | 'ownerReferences'>>;
  readonly [field: string]: unknown;
}

const NOT_PATCHED = new Set(['metadata', 'status', 'apiVersion', 'kind']);

/** `healed`'s entries whose values differ in `observed`; undefined when none do. */
function changedEntries(observed: Readonly<Record<string, string>> | undefined, healed: Readonly<Record<string, string>> | undefined): Record<string, string> | undefined {
  const changed = Object.entries(healed ?? {}).filter(([key, value]) => observed?.[key] !== value);
  return changed.length > 0 ? Object.fromEntries(changed) : undefined;
}

/**
 * The merge patch that turns `observed` into `healed` in the fields the controller writes (see the
 * module doc), or undefined when they already agree. Inputs are not mutated.
 */
export function childMergePatch(observed: KubeObject, healed: KubeObject): ChildMergePatch | undefined {
  const patch: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(observed), ...Object.keys(healed)])) {
    if (NOT_PATCHED.has(key)) continue;
    const before = observed[key];
    const after = healed[key];
    if (after === undefined) {
      if (before !== undefined) patch[key] = null;
      continue;
    }
    const part: unknown = before === undefined ? after : jsonMergePatch.generate(before, after);
    if (part !== undefined) patch[key] = part;
  }
  const metadata: Record<string, unknown> = {};
  const labels = changedEntries(observed.metadata.labels, healed.metadata.labels);
  if (labels) metadata['labels'] = labels;
  const annotations = changedEntries(observed.metadata.annotations, healed.metadata.annotations);
  if (annotations) metadata['annotations'] = annotations;
  const refs = healed.metadata.ownerReferences ?? [];
  if (!isDeepStrictEqual(observed.metadata.ownerReferences ?? [], refs)) metadata['ownerReferences'] = refs;
  if (Object.keys(patch).length === 0 && Object.keys(metadata).length === 0) return undefined;
  const resourceVersion = observed.metadata.resourceVersion;
  return { ...patch, metadata: { ...metadata, ...(resourceVersion !== undefined ? { resourceVersion } : {}) } };
}

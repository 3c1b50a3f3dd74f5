import { randomInt, randomUUID } from 'node:crypto';
import type { KubeObject } from '../../src/kube/object.ts';
import { jsonEqual } from './json-equal.ts';
import { hasStatusSubresource, type ResourceType } from './resource-type.ts';

const NAME_CHARS = 'bcdfghjklmnpqrstvwxz2456789';

/** `SimpleNameGenerator`: the base (cut to 58 characters) plus 5 random characters. */
export function generateName(base: string): string {
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += NAME_CHARS[randomInt(NAME_CHARS.length)];
  return `${base.slice(0, 58)}${suffix}`;
}

/** RFC 3339 with second precision, as `metav1.Time` serializes. */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** The fields compared for `generation`: everything but metadata (and status when it is a subresource). */
function specView(type: ResourceType, obj: KubeObject): Record<string, unknown> {
  const { metadata: _m, status, apiVersion: _a, kind: _k, ...rest } = obj;
  return hasStatusSubresource(type) ? rest : { ...rest, status };
}

/** True when an update changes what `generation` tracks. */
export function specChanged(type: ResourceType, next: KubeObject, old: KubeObject): boolean {
  return !jsonEqual(specView(type, next), specView(type, old));
}

/** Sets the system fields of a new object (`rest.BeforeCreate` + `FillObjectMetaSystemFields`). */
export function prepareCreateMeta(type: ResourceType, obj: KubeObject, nowMs: number): void {
  const m = obj.metadata;
  m.uid = randomUUID();
  m.creationTimestamp = rfc3339(nowMs);
  delete m.deletionTimestamp;
  delete m.deletionGracePeriodSeconds;
  delete m.resourceVersion;
  delete m.managedFields;
  if (type.generation === 'spec') m.generation = 1;
  else delete m.generation;
  if (!type.namespaced) delete m.namespace;
  if (hasStatusSubresource(type)) {
    // Built-ins reset status to its zero value (`status: {}`, a Service's `{loadBalancer: {}}`); custom resources drop it.
    if (type.custom) delete obj.status;
    else obj.status = structuredClone(type.zeroStatus ?? {});
  }
}

/**
 * Carries the system fields of `old` over to an update (`rest.BeforeUpdate`): uid, creation and
 * deletion stamps cannot be changed by clients, and generation follows the spec.
 */
export function prepareUpdateMeta(type: ResourceType, obj: KubeObject, old: KubeObject, subresource: string | undefined): KubeObject {
  let next = obj;
  if (subresource === 'status') {
    // The status endpoint only writes status (customResourceStatusStrategy.PrepareForUpdate).
    next = { ...old, metadata: { ...old.metadata } };
    if (obj.status !== undefined) next.status = obj.status;
    else delete next.status;
  } else if (hasStatusSubresource(type)) {
    next = { ...obj };
    if (old.status !== undefined) next.status = old.status;
    else delete next.status;
  }
  const m = next.metadata;
  const o = old.metadata;
  m.uid = o.uid;
  m.creationTimestamp = o.creationTimestamp;
  m.name = o.name;
  if (o.namespace !== undefined) m.namespace = o.namespace;
  else delete m.namespace;
  if (o.deletionTimestamp !== undefined) m.deletionTimestamp = o.deletionTimestamp;
  else delete m.deletionTimestamp;
  if (o.deletionGracePeriodSeconds !== undefined) m.deletionGracePeriodSeconds = o.deletionGracePeriodSeconds;
  else delete m.deletionGracePeriodSeconds;
  delete m.managedFields;
  if (type.generation === 'spec') m.generation = (o.generation ?? 1) + (specChanged(type, next, old) ? 1 : 0);
  else delete m.generation;
  return next;
}

/** True when two versions of an object are the same apart from resourceVersion. */
export function unchanged(next: KubeObject, old: KubeObject): boolean {
  const a = { ...next, metadata: { ...next.metadata, resourceVersion: undefined } };
  const b = { ...old, metadata: { ...old.metadata, resourceVersion: undefined } };
  return jsonEqual(a, b);
}

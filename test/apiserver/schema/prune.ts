import { child, index } from './path.ts';
import type { JSONSchemaProps } from './types.ts';
import { isObject } from './value.ts';

/** The `metav1.ObjectMeta` fields; anything else under a resource's `metadata` is dropped. */
const objectMetaFields = new Set([
  'name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation',
  'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations',
  'ownerReferences', 'finalizers', 'managedFields',
]);

/**
 * Removes, in place, every field the structural schema does not specify, as apiextensions-apiserver's
 * `structuralpruning.Prune` does; returns the removed paths (`spec.bogus`, `spec.items[0].x`), which is
 * what `fieldValidation=Strict|Warn` reports as `unknown field "<path>"`.
 *
 * At the resource root (and inside `x-kubernetes-embedded-resource` objects) `apiVersion`, `kind` and
 * `metadata` are kept; `metadata` is reduced to the ObjectMeta fields (kube round-trips it through
 * `metav1.ObjectMeta`). `x-kubernetes-preserve-unknown-fields` keeps unknown fields but known
 * properties below it are still pruned.
 */
export function pruneCustomResource(schema: JSONSchemaProps, obj: unknown): string[] {
  const removed: string[] = [];
  if (isObject(obj)) pruneResource(schema, obj, '', removed);
  return removed;
}

function pruneResource(schema: JSONSchemaProps, obj: Record<string, unknown>, path: string, removed: string[]): void {
  const meta = obj['metadata'];
  if (isObject(meta)) {
    for (const name of Object.keys(meta)) {
      if (!objectMetaFields.has(name)) {
        delete meta[name];
        removed.push(child(child(path, 'metadata'), name));
      }
    }
  }
  pruneObject(schema, obj, path, removed, true);
}

function pruneObject(schema: JSONSchemaProps, obj: Record<string, unknown>, path: string, removed: string[], isResource: boolean): void {
  const properties = schema.properties ?? {};
  const additional = schema.additionalProperties;
  for (const name of Object.keys(obj)) {
    if (isResource && (name === 'apiVersion' || name === 'kind' || name === 'metadata')) continue;
    const fieldPath = child(path, name);
    const prop = properties[name] ?? (isObject(additional) ? additional : undefined);
    if (prop) {
      pruneValue(prop, obj[name], fieldPath, removed);
    } else if (!schema['x-kubernetes-preserve-unknown-fields'] && additional !== true) {
      delete obj[name];
      removed.push(fieldPath);
    }
  }
}

function pruneValue(schema: JSONSchemaProps, value: unknown, path: string, removed: string[]): void {
  if (Array.isArray(value)) {
    const items = schema.items;
    if (items) value.forEach((item, i) => pruneValue(items, item, index(path, i), removed));
    return;
  }
  if (!isObject(value)) return;
  if (schema['x-kubernetes-embedded-resource']) pruneResource(schema, value, path, removed);
  else pruneObject(schema, value, path, removed, false);
}

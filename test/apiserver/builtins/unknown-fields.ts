import * as k8s from '@kubernetes/client-node';
import type { KubeObject } from '../../../src/kube/object.ts';
import { obj } from './json.ts';

/** One field of a generated client-node model (from Kubernetes' OpenAPI document). */
interface Attribute {
  readonly baseName: string;
  readonly type: string;
}

/** The model class of each served built-in, by `resource.group`. */
const modelByResource: Readonly<Record<string, string>> = {
  'configmaps.': 'V1ConfigMap',
  'secrets.': 'V1Secret',
  'pods.': 'V1Pod',
  'services.': 'V1Service',
  'namespaces.': 'V1Namespace',
  'serviceaccounts.': 'V1ServiceAccount',
  'events.': 'CoreV1Event',
  'events.events.k8s.io': 'EventsV1Event',
  'cronjobs.batch': 'V1CronJob',
  'jobs.batch': 'V1Job',
  'leases.coordination.k8s.io': 'V1Lease',
  'networkpolicies.networking.k8s.io': 'V1NetworkPolicy',
  'roles.rbac.authorization.k8s.io': 'V1Role',
  'clusterroles.rbac.authorization.k8s.io': 'V1ClusterRole',
  'rolebindings.rbac.authorization.k8s.io': 'V1RoleBinding',
  'clusterrolebindings.rbac.authorization.k8s.io': 'V1ClusterRoleBinding',
  'customresourcedefinitions.apiextensions.k8s.io': 'V1CustomResourceDefinition',
};

/**
 * Go types whose JSON is a union the generated models call `any`, but which the strict decoder
 * still checks field by field (`JSONSchemaPropsOrArray`, `JSONSchemaPropsOrBool`).
 */
const overrides: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  V1JSONSchemaProps: { items: 'V1JSONSchemaProps', additionalProperties: 'V1JSONSchemaProps', additionalItems: 'V1JSONSchemaProps' },
};

const attributeCache = new Map<string, ReadonlyMap<string, string> | undefined>();

function attributesOf(model: string): ReadonlyMap<string, string> | undefined {
  if (attributeCache.has(model)) return attributeCache.get(model);
  const cls: unknown = Reflect.get(k8s, model);
  let attrs: Map<string, string> | undefined;
  if (typeof cls === 'function' && typeof Reflect.get(cls, 'getAttributeTypeMap') === 'function') {
    const list = (cls as unknown as { getAttributeTypeMap(): Attribute[] }).getAttributeTypeMap();
    attrs = new Map(list.map((a) => [a.baseName, overrides[model]?.[a.baseName] ?? a.type]));
  }
  attributeCache.set(model, attrs);
  return attrs;
}

/**
 * Removes, in place, the fields a built-in kind does not have, and returns their paths
 * (`bogus`, `spec.jobTemplate.spec.template.spec.containers[0].imagePullPolcy`): what kube-apiserver's
 * strict JSON decoder reports as `unknown field "<path>"` under `fieldValidation=Strict|Warn`, and
 * what decoding into the Go type silently drops under `Ignore`. The field sets come from the
 * generated models of @kubernetes/client-node (Kubernetes' OpenAPI document). Unknown kinds are left
 * alone (returns []).
 */
export function pruneBuiltinUnknownFields(group: string, resource: string, object: KubeObject): string[] {
  const model = modelByResource[`${resource}.${group}`];
  if (!model) return [];
  const removed: string[] = [];
  prune(model, object, '', removed);
  return removed;
}

function prune(type: string, value: unknown, path: string, removed: string[]): void {
  if (value === null || value === undefined) return;
  const array = /^Array<(.+)>$/.exec(type);
  if (array?.[1]) {
    const itemType = array[1];
    if (Array.isArray(value)) value.forEach((item, i) => prune(itemType, item, `${path}[${i}]`, removed));
    return;
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map?.[1]) {
    const valueType = map[1];
    const o = obj(value);
    if (o) for (const [k, v] of Object.entries(o)) prune(valueType, v, path === '' ? k : `${path}.${k}`, removed);
    return;
  }
  const attrs = attributesOf(type);
  const o = obj(value);
  if (!attrs || !o) return;
  for (const key of Object.keys(o)) {
    const fieldPath = path === '' ? key : `${path}.${key}`;
    const fieldType = attrs.get(key);
    if (fieldType === undefined) {
      delete o[key];
      removed.push(fieldPath);
    } else {
      prune(fieldType, o[key], fieldPath, removed);
    }
  }
}

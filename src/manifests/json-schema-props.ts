import type { k8s } from 'cdk8s-plus-28';
import type { SchemaNode } from '../api/index.ts';

/** Keywords whose value is a map of schemas, converted by cdk8s-plus' `toJson_JsonSchemaProps`. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', 'definitions']);
/** Keywords whose value is a list of schemas, converted by cdk8s-plus. */
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf']);

function camel(key: string): string {
  // x-kubernetes-list-map-keys → xKubernetesListMapKeys; $ref → ref.
  return key.replace(/^\$/, '').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/**
 * Converts a CRD openAPIV3Schema in wire form (`x-kubernetes-validations`) into the camelCase props
 * `k8s.KubeCustomResourceDefinition` expects. Without this, cdk8s-plus silently drops every raw
 * `x-kubernetes-*` key. Quirk of its generated serializer: `items` and `additionalProperties` are
 * copied verbatim (not converted back), so those subtrees must stay in wire form.
 */
export function toJsonSchemaProps(node: SchemaNode): k8s.JsonSchemaProps {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (SCHEMA_MAPS.has(key)) {
      out[key] = Object.fromEntries(
        Object.entries(value as Record<string, SchemaNode>).map(([name, child]) => [name, toJsonSchemaProps(child)]),
      );
    } else if (SCHEMA_LISTS.has(key)) {
      out[key] = (value as SchemaNode[]).map(toJsonSchemaProps);
    } else if (key === 'not') {
      out[key] = toJsonSchemaProps(value as SchemaNode);
    } else {
      out[camel(key)] = value;
    }
  }
  return out as k8s.JsonSchemaProps;
}

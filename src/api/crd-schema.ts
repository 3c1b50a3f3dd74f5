import type { SchemaNode } from './schema.ts';
import { withoutKeywords } from './schema-keywords.ts';

/** Keywords that exist only for json-schema-to-typescript and are not allowed in a CRD. */
const TYPESCRIPT_ONLY = new Set(['title', 'tsType', '$schema', '$id']);

/**
 * The CRD `openAPIV3Schema` derived from the BackupSchedule JSON Schema: the same tree without the
 * keywords that only the type generator reads. The result uses the wire keys (`x-kubernetes-validations`),
 * i.e. it is what the synthesized CRD YAML must contain. The root `metadata` is reduced to `type: object`.
 */
export function toCrdOpenApiSchema(node: SchemaNode): SchemaNode {
  // `x-kubernetes-validations` holds data too, but no dropped keyword occurs inside it.
  const root = withoutKeywords(node, TYPESCRIPT_ONLY) as Record<string, unknown>;
  const properties = root['properties'] as Record<string, unknown> | undefined;
  // The root `metadata` may carry nothing but `type: object` (and name/generateName restrictions): the
  // API server rejects even a description with "must not specify anything other than name and
  // generateName, but metadata is implicitly specified" (apiextensions-apiserver schema/validation.go).
  if (properties?.['metadata'] !== undefined) properties['metadata'] = { type: 'object' };
  return root;
}

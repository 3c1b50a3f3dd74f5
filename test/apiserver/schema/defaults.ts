import type { JSONSchemaProps } from './types.ts';
import { isObject } from './value.ts';

/**
 * Applies the schema's `default`s in place, as apiextensions-apiserver's structural defaulting does:
 * top-down, so a property defaulted to `{}` is itself defaulted from its own properties (see
 * test/fixtures/k8s-reference/cr-create-defaults-and-pruning.json, where `nested: {}` became `{keep: 7}`).
 * A `null` in a non-nullable field counts as absent and is defaulted; a non-nullable `null` without
 * a default is dropped first (`PruneNonNullableNullsWithoutDefaults`).
 */
export function defaultCustomResource(schema: JSONSchemaProps, obj: unknown): void {
  pruneNonNullableNulls(schema, obj);
  applyDefaults(schema, obj);
}

function applyDefaults(schema: JSONSchemaProps | undefined, value: unknown): void {
  if (!schema) return;
  if (Array.isArray(value)) {
    for (const item of value) applyDefaults(schema.items, item);
    return;
  }
  if (!isObject(value)) return;
  const properties = schema.properties ?? {};
  for (const [name, prop] of Object.entries(properties)) {
    if (prop.default === undefined) continue;
    if (!(name in value) || (value[name] === null && !prop.nullable)) value[name] = structuredClone(prop.default);
  }
  for (const [name, child] of Object.entries(value)) {
    const prop = properties[name];
    if (prop) applyDefaults(prop, child);
    else if (isObject(schema.additionalProperties)) applyDefaults(schema.additionalProperties, child);
  }
}

function pruneNonNullableNulls(schema: JSONSchemaProps | undefined, value: unknown): void {
  if (!schema) return;
  if (Array.isArray(value)) {
    for (const item of value) pruneNonNullableNulls(schema.items, item);
    return;
  }
  if (!isObject(value)) return;
  for (const [name, child] of Object.entries(value)) {
    const prop = schema.properties?.[name] ?? (isObject(schema.additionalProperties) ? schema.additionalProperties : undefined);
    if (!prop) continue;
    if (child === null && !prop.nullable && prop.default === undefined) delete value[name];
    else pruneNonNullableNulls(prop, child);
  }
}

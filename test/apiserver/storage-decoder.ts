/**
 * Decoding of objects read from storage, as kube-apiserver's storage codec does it for custom
 * resources: apiextensions-apiserver's codec applies the structural-schema defaults of the version an
 * object is stored in whenever it decodes that object from etcd (then, when another version is asked
 * for, conversion applies that version's defaults: conversion/crd-converter.ts). So an object written
 * before a defaulted field existed, or put into etcd directly, reads back with the default, and an
 * update starts from (and validates) the defaulted object.
 */
import type { KubeObject } from '../../src/kube/object.ts';
import { cloneJson, jsonEqual } from './json-equal.ts';
import type { ResourceRegistry } from './resource-registry.ts';
import { defaultCustomResource, type JSONSchemaProps } from './schema/index.ts';

/** Turns a stored object into what readers see; must return `stored` itself when nothing changes. */
export type StorageDecoder = (gr: string, stored: KubeObject) => KubeObject;

/** Returns objects unchanged (built-ins: their defaults are applied on write by the test server). */
export const identityDecoder: StorageDecoder = (_gr, stored) => stored;

/**
 * A decoder applying the schema defaults of each custom resource's stored version. Stored objects are
 * never mutated (storage.ts), so the decoded copy is remembered per stored object and per schema: a
 * CRD update (a new schema object) decodes again, as kube does with the new schema.
 */
export function customResourceDefaulter(registry: ResourceRegistry): StorageDecoder {
  const decoded = new WeakMap<KubeObject, { readonly schema: JSONSchemaProps; readonly object: KubeObject }>();
  return (gr, stored) => {
    const slash = gr.indexOf('/');
    const group = gr.slice(0, slash);
    const apiVersion = stored.apiVersion ?? '';
    // Built-ins (and the core group, '') are not custom resources; an object's version is in its apiVersion.
    if (group === '' || !apiVersion.startsWith(`${group}/`)) return stored;
    const schema = registry.get(group, apiVersion.slice(group.length + 1), gr.slice(slash + 1))?.custom?.schema as JSONSchemaProps | undefined;
    if (!schema) return stored;
    const known = decoded.get(stored);
    if (known?.schema === schema) return known.object;
    const copy = cloneJson(stored);
    defaultCustomResource(schema, copy);
    // Identity when nothing was defaulted: callers compare objects by reference (no-op updates).
    const object = jsonEqual(copy, stored) ? stored : copy;
    decoded.set(stored, { schema, object });
    return object;
  };
}

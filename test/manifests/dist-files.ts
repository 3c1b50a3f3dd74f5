/** Test helpers: read the committed dist/ and build an ajv validator from the synthesized CRD. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { parse } from 'yaml';

/** dist/ of the repository. */
export const DIST_DIR = new URL('../../dist/', import.meta.url).pathname;
/** dist/examples/ of the repository: the example BackupSchedule and its Namespace. */
export const DIST_EXAMPLES_DIR = new URL('../../dist/examples/', import.meta.url).pathname;

/** A manifest as parsed from YAML. */
export type Manifest = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> }; [key: string]: unknown };

/** Every `*.yaml` file directly in `dir` (what `kubectl create -f <dir>` reads), parsed, keyed by file name, in name order. */
export function readManifests(dir: string = DIST_DIR): Map<string, Manifest> {
  const out = new Map<string, Manifest>();
  for (const file of readdirSync(dir).sort()) {
    if (file.endsWith('.yaml')) {
      out.set(file, parse(readFileSync(join(dir, file), 'utf8')) as Manifest);
    }
  }
  return out;
}

/** The `resources` of the kustomization file (`Kustomization`) in `dir`. */
export function readKustomization(dir: string = DIST_DIR): string[] {
  return (parse(readFileSync(join(dir, 'Kustomization'), 'utf8')) as { resources: string[] }).resources;
}

/** The `openAPIV3Schema` of one version (default v1alpha1), read from the synthesized CRD in `dir`. */
export function crdOpenApiSchema(dir: string = DIST_DIR, versionName = 'v1alpha1'): Record<string, unknown> {
  const crd = [...readManifests(dir).values()].find((m) => m.kind === 'CustomResourceDefinition');
  if (crd === undefined) throw new Error(`no CustomResourceDefinition in ${dir}`);
  const spec = crd['spec'] as { versions: { name: string; schema: { openAPIV3Schema: Record<string, unknown> } }[] };
  const version = spec.versions.find((v) => v.name === versionName);
  if (version === undefined) throw new Error(`CRD has no version ${versionName}`);
  return version.schema.openAPIV3Schema;
}

/**
 * ajv validator of the CRD's openAPIV3Schema as the API server reads it (x-kubernetes-* keywords are
 * known but not evaluated by ajv; int32/int64 formats checked as ranges).
 */
export function crdValidator(dir: string = DIST_DIR, versionName = 'v1alpha1'): ValidateFunction {
  const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false });
  (addFormatsModule as unknown as (a: Ajv) => Ajv)(ajv);
  ajv.addFormat('int32', { type: 'number', validate: (n: number) => n >= -(2 ** 31) && n < 2 ** 31 });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
  for (const k of ['x-kubernetes-validations', 'x-kubernetes-list-type', 'x-kubernetes-list-map-keys']) ajv.addKeyword(k);
  return ajv.compile(crdOpenApiSchema(dir, versionName));
}

import { readFileSync } from 'node:fs';
import type { StatusBody } from '../../../src/kube/object.ts';
import type { JSONSchemaProps } from './types.ts';

/**
 * Test support: the recorded kube-apiserver answers in shared/k8s-reference (beside the repository
 * clone, `../shared/k8s-reference` from its root).
 */
const referenceDir = new URL('../../../../shared/k8s-reference/', import.meta.url);

/** A recorded JSON file, parsed. */
export function loadReference<T = unknown>(file: string): T {
  return JSON.parse(readFileSync(new URL(file, referenceDir), 'utf8')) as T;
}

/** A recorded Status body. */
export function loadStatus(file: string): StatusBody {
  return loadReference<StatusBody>(file);
}

/** The `openAPIV3Schema` of the recorded Widget CRD request. */
export function widgetSchema(): JSONSchemaProps {
  const crd = loadReference<{ spec: { versions: Array<{ schema: { openAPIV3Schema: JSONSchemaProps } }> } }>('crd-widget-request.json');
  const version = crd.spec.versions[0];
  if (!version) throw new Error('crd-widget-request.json: no versions');
  return version.schema.openAPIV3Schema;
}

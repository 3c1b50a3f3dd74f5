/**
 * The suite's neutral multi-version CRD: `Gadget` with v1alpha1 (`spec.color`, printer column Color)
 * and v1 (`spec.paint.color`, printer column Paint), under a random group per file. Which version is
 * stored and how versions convert (None or a webhook) is the test's choice.
 */
import type { ApiClient } from './http-client.ts';
import { until } from './widget-crd.ts';

/** The versions of a Gadget. */
export type GadgetVersion = 'v1alpha1' | 'v1';

/** `spec.conversion` of the CRD. */
export type GadgetConversion = { readonly strategy: 'None' } | { readonly strategy: 'Webhook'; readonly url: string; readonly caBundle: string };

/** How to build the CRD. */
export interface GadgetCrdOptions {
  /** The storage version. */
  readonly storage: GadgetVersion;
  /** Versions listed in `spec.versions`. @default both */
  readonly versions?: readonly GadgetVersion[];
  readonly conversion: GadgetConversion;
}

const ageColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

function versionEntry(name: GadgetVersion, storage: boolean): Record<string, unknown> {
  const spec = name === 'v1alpha1'
    ? { color: { type: 'string' }, size: { type: 'integer', default: 1 } }
    : { paint: { type: 'object', properties: { color: { type: 'string' } } }, size: { type: 'integer', default: 1 } };
  return {
    name,
    served: true,
    storage,
    subresources: { status: {} },
    additionalPrinterColumns: [name === 'v1alpha1' ? { name: 'Color', type: 'string', jsonPath: '.spec.color' } : { name: 'Paint', type: 'string', jsonPath: '.spec.paint.color' }, ageColumn],
    schema: {
      openAPIV3Schema: {
        type: 'object',
        properties: {
          spec: { type: 'object', properties: spec },
          status: { type: 'object', properties: { phase: { type: 'string' } } },
        },
      },
    },
  };
}

/** The CRD object. */
export function gadgetCrd(group: string, options: GadgetCrdOptions): Record<string, unknown> {
  const c = options.conversion;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `gadgets.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
      versions: (options.versions ?? ['v1alpha1', 'v1']).map((v) => versionEntry(v, v === options.storage)),
      conversion: c.strategy === 'None' ? { strategy: 'None' } : { strategy: 'Webhook', webhook: { clientConfig: { url: c.url, caBundle: c.caBundle }, conversionReviewVersions: ['v1'] } },
    },
  };
}

/** Paths and bodies of an installed Gadget CRD. */
export interface Gadgets {
  readonly group: string;
  readonly crdName: string;
  readonly crdPath: string;
  /** `/apis/<group>/<version>/namespaces/<ns>/gadgets[/<name>]`. */
  path(version: GadgetVersion, ns: string, name?: string): string;
  /** A Gadget in `version` with that color. */
  body(version: GadgetVersion, name: string, color: string): Record<string, unknown>;
}

/** Creates (or replaces the spec of) the CRD and waits until every listed version answers. */
export async function installGadgets(api: ApiClient, group: string, options: GadgetCrdOptions): Promise<Gadgets> {
  const crdName = `gadgets.${group}`;
  const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crdName}`;
  const res = await api.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', gadgetCrd(group, options));
  if (res.status !== 201) throw new Error(`creating CRD ${crdName}: HTTP ${res.status} ${res.text}`);
  for (const v of options.versions ?? ['v1alpha1', 'v1']) await until(async () => (await api.get(`/apis/${group}/${v}/gadgets?limit=1`)).status === 200, `${crdName} ${v} served`, 15_000);
  return {
    group,
    crdName,
    crdPath,
    path: (version, ns, name) => `/apis/${group}/${version}/namespaces/${ns}/gadgets${name ? `/${name}` : ''}`,
    body: (version, name, color) => ({
      apiVersion: `${group}/${version}`,
      kind: 'Gadget',
      metadata: { name },
      spec: version === 'v1alpha1' ? { color } : { paint: { color } },
    }),
  };
}

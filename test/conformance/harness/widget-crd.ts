/**
 * The neutral `Widget` CRD of the suite, modelled on the recorded `crd-widget-request.json` plus a CEL
 * rule (Kubernetes ≥ 1.25). Each test file installs it under its own random group so files never
 * collide, and waits for `Established=True` and for the resource to answer.
 */
import type { ApiClient } from './http-client.ts';

/** The CEL rule's message, as the 422 must repeat it. */
export const celMessage = 'fast widgets must have size at most 5';

/** Builds the CRD object for `group`. */
export function widgetCrd(group: string): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', shortNames: ['wd'], categories: ['all'] },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Size', type: 'integer', jsonPath: '.spec.size' },
            { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  required: ['schedule'],
                  'x-kubernetes-validations': [{ rule: "self.mode != 'Fast' || self.size <= 5", message: celMessage }],
                  properties: {
                    schedule: { type: 'string', pattern: '^(@(hourly|daily|weekly|monthly|yearly)|(\\S+\\s+){4}\\S+)$', maxLength: 100 },
                    size: { type: 'integer', minimum: 1, maximum: 10, default: 3 },
                    mode: { type: 'string', enum: ['Fast', 'Safe'], default: 'Safe' },
                    tags: { type: 'array', maxItems: 3, items: { type: 'string', minLength: 1 } },
                    nested: {
                      type: 'object',
                      default: {},
                      properties: { keep: { type: 'integer', default: 7, minimum: 0 }, note: { type: 'string', nullable: true } },
                    },
                    free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                    quantity: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
                  },
                },
                status: {
                  type: 'object',
                  properties: {
                    observedGeneration: { type: 'integer', format: 'int64' },
                    conditions: {
                      type: 'array',
                      items: {
                        type: 'object',
                        required: ['type', 'status'],
                        properties: {
                          type: { type: 'string' },
                          status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
                          reason: { type: 'string' },
                          message: { type: 'string' },
                          lastTransitionTime: { type: 'string', format: 'date-time' },
                        },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      ],
    },
  };
}

/** An installed Widget CRD and the paths to its resources. */
export interface Widgets {
  readonly group: string;
  readonly apiVersion: string;
  /** `widgets.<group>`, the CRD's name. */
  readonly crdName: string;
  /** Collection or object path in `ns` (`/apis/<group>/v1/namespaces/<ns>/widgets[/<name>]`). */
  path(ns: string, name?: string): string;
  /** A Widget body. */
  body(name: string, spec?: Record<string, unknown>, extra?: Record<string, unknown>): Record<string, unknown>;
}

/** Waits up to `timeoutMs` for `probe` to hold (polling every 50 ms). */
export async function until(probe: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await probe())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Creates the CRD under `group`, waits for Established and for the resource to be served. */
export async function installWidgets(api: ApiClient, group: string): Promise<Widgets> {
  const crdName = `widgets.${group}`;
  const res = await api.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', widgetCrd(group));
  if (res.status !== 201) throw new Error(`creating CRD ${crdName}: HTTP ${res.status} ${res.text}`);
  await until(async () => {
    const crd = await api.get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crdName}`);
    const conds = (crd.body?.status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ?? [];
    return conds.some((c) => c.type === 'Established' && c.status === 'True');
  }, `${crdName} Established`);
  // A real apiserver may answer 404 for a moment after Established while its handler installs.
  await until(async () => (await api.get(`/apis/${group}/v1/widgets?limit=1`)).status === 200, `${crdName} served`);
  const apiVersion = `${group}/v1`;
  return {
    group,
    apiVersion,
    crdName,
    path: (ns, name) => `/apis/${group}/v1/namespaces/${ns}/widgets${name ? `/${name}` : ''}`,
    body: (name, spec = { schedule: '@daily' }, extra = {}) => ({ apiVersion, kind: 'Widget', metadata: { name }, spec, ...extra }),
  };
}

/** Deletes the CRD (best effort). */
export async function uninstallWidgets(api: ApiClient, widgets: Widgets | undefined): Promise<void> {
  if (widgets) await api.delete(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${widgets.crdName}`).catch(() => undefined);
}

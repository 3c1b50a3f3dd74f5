/**
 * A two-version custom resource with objects stored in the old version, for the migration tests and
 * `npm run bench:migration`: the conformance suite's `Gadget` in v1alpha1 and v1 (conversion None:
 * `spec.color` of v1alpha1 is pruned when read as v1, `spec.size` is kept), created with v1alpha1 as
 * the storage version, seeded through the API, then switched to v1 as kube-apiserver users do (the
 * objects stay encoded in v1alpha1 and `status.storedVersions` becomes [v1alpha1, v1]).
 */
import type { KubeClient } from '../../src/kube/kube-client.ts';
import type { KubeObject } from '../../src/kube/object.ts';
import { ResourceClient, type ResourceType } from '../../src/kube/resource-client.ts';
import { gadgetCrd, type GadgetConversion, type GadgetVersion } from '../conformance/harness/gadget-crd.ts';

const CRDS: ResourceType = { group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false };
const NAMESPACES: ResourceType = { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false };

/**
 * The conformance suite's Gadget CRD (test/conformance/harness/gadget-crd.ts) with `storage` as its
 * storage version, which is not served when `servedStorage` is false.
 */
export function twoVersionCrd(group: string, storage: GadgetVersion, servedStorage = true, conversion: GadgetConversion = { strategy: 'None' }): KubeObject {
  const crd = gadgetCrd(group, { storage, conversion }) as unknown as KubeObject;
  for (const version of (crd['spec'] as { versions: { storage: boolean; served: boolean }[] }).versions) if (version.storage) version.served = servedStorage;
  return crd;
}

/** Options of {@link seedGadgets}. */
export interface SeedOptions {
  readonly group: string;
  /** Objects to create in v1alpha1. */
  readonly objects: number;
  /** Spread over this many namespaces `gadgets-0`…. @default 3 */
  readonly namespaces?: number;
  /** Creates in flight. @default 16 */
  readonly concurrency?: number;
  /** How the versions convert. @default None */
  readonly conversion?: GadgetConversion;
}

/** What {@link seedGadgets} set up. */
export interface SeededGadgets {
  readonly crdName: string;
  /** The resource in v1 (the storage version after the switch). */
  readonly v1: ResourceClient<KubeObject>;
  readonly crds: ResourceClient<KubeObject>;
  /** `status.storedVersions` of the CRD now. */
  storedVersions(): Promise<string[]>;
}

/** Polls until `probe` holds (the CRD controller serves a new CRD a moment after its create). */
async function until(what: string, probe: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Creates the CRD (storage v1alpha1), `objects` Gadgets named `g-<i>` in v1alpha1, then makes v1 the
 * storage version. Each Gadget carries `spec.size = i` and a label, so a test can check nothing changed.
 */
export async function seedGadgets(client: KubeClient, options: SeedOptions): Promise<SeededGadgets> {
  const { group } = options;
  const crdName = `gadgets.${group}`;
  const crds = new ResourceClient<KubeObject>(client, CRDS);
  const resource = (version: string): ResourceClient<KubeObject> => new ResourceClient<KubeObject>(client, { group, version, plural: 'gadgets', kind: 'Gadget', namespaced: true });
  const v1alpha1 = resource('v1alpha1');
  await crds.create(twoVersionCrd(group, 'v1alpha1', true, options.conversion));
  await until(`${crdName} served`, async () => (await v1alpha1.list({ limit: 1 }), true));
  const namespaceCount = options.namespaces ?? 3;
  const namespaces = new ResourceClient<KubeObject>(client, NAMESPACES);
  for (let n = 0; n < namespaceCount; n++) {
    await namespaces.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `gadgets-${n}` } }).catch((err: { code?: number }) => {
      if (err.code !== 409) throw err;
    });
  }
  let next = 0;
  await Promise.all(Array.from({ length: options.concurrency ?? 16 }, async () => {
    while (next < options.objects) {
      const i = next++;
      await v1alpha1.create({ apiVersion: `${group}/v1alpha1`, kind: 'Gadget', metadata: { name: `g-${i}`, namespace: `gadgets-${i % namespaceCount}`, labels: { index: String(i) } }, spec: { color: 'red', size: i } });
    }
  }));
  const crd = await crds.get({ name: crdName });
  await crds.update({ ...twoVersionCrd(group, 'v1', true, options.conversion), metadata: crd.metadata });
  const v1 = resource('v1');
  await until(`${crdName} v1 served`, async () => (await v1.list({ limit: 1 }), true));
  return {
    crdName,
    v1,
    crds,
    storedVersions: async () => ((await crds.get({ name: crdName }))['status'] as { storedVersions: string[] }).storedVersions,
  };
}

/**
 * Makes v1 stricter after the objects were written, as a new release's schema may: `spec.size` at most
 * `max` in v1, so the Gadgets seeded with a larger size are invalid in the storage version. On a server
 * without validation ratcheting their no-op rewrite then answers 422.
 */
export async function limitGadgetSize(seeded: SeededGadgets, group: string, max: number): Promise<void> {
  const crd = await seeded.crds.get({ name: seeded.crdName });
  const stricter = twoVersionCrd(group, 'v1') as unknown as { spec: { versions: { name: string; schema: { openAPIV3Schema: { properties: { spec: { properties: { size: Record<string, unknown> } } } } } }[] } };
  for (const version of stricter.spec.versions) if (version.name === 'v1') version.schema.openAPIV3Schema.properties.spec.properties.size['maximum'] = max;
  await seeded.crds.update({ ...(stricter as unknown as KubeObject), metadata: crd.metadata });
}

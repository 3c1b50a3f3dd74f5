import type { KubeObject, StatusCause } from '../../src/kube/object.ts';
import type { Clock } from '../../src/runtime/clock.ts';
import { cloneJson } from './json-equal.ts';
import { rfc3339 } from './object-meta.ts';
import type { RegistryStore } from './registry-store.ts';
import type { ResourceRegistry } from './resource-registry.ts';
import type { PrinterColumn, ResourceType } from './resource-type.ts';
import { validateStructuralSchema, type JSONSchemaProps } from './schema/index.ts';
import type { Storage } from './storage.ts';
import { recordStorageVersion, validateConversion, validateStoredVersions } from './crd-versions.ts';

const GROUP = 'apiextensions.k8s.io';
const CRD_GR = `${GROUP}/customresourcedefinitions`;
const CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

interface CrdNames {
  plural?: string;
  singular?: string;
  kind?: string;
  listKind?: string;
  shortNames?: string[];
  categories?: string[];
}
interface CrdVersion {
  name?: string;
  served?: boolean;
  storage?: boolean;
  schema?: { openAPIV3Schema?: JSONSchemaProps };
  subresources?: { status?: unknown; scale?: unknown };
  additionalPrinterColumns?: PrinterColumn[];
}
interface CrdSpec {
  group?: string;
  scope?: string;
  names?: CrdNames;
  versions?: CrdVersion[];
  conversion?: { strategy?: string; webhook?: unknown };
}

function specOf(crd: KubeObject): CrdSpec {
  return (crd['spec'] as CrdSpec | undefined) ?? {};
}

/** The resource types a CRD serves (one per served version). */
export function typesOfCrd(crd: KubeObject): ResourceType[] {
  const spec = specOf(crd);
  const names = spec.names ?? {};
  const kind = names.kind ?? '';
  return (spec.versions ?? [])
    .filter((v) => v.served !== false)
    .map((v) => ({
      group: spec.group ?? '',
      version: v.name ?? '',
      resource: names.plural ?? '',
      kind,
      listKind: names.listKind ?? `${kind}List`,
      namespaced: spec.scope !== 'Cluster',
      singularName: names.singular ?? kind.toLowerCase(),
      shortNames: names.shortNames ?? [],
      categories: names.categories ?? [],
      // The scale subresource is not served (no autoscaling/v1 Scale conversion here).
      subresources: v.subresources?.status !== undefined ? ['status'] : [],
      verbs: ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch'],
      generation: 'spec' as const,
      allowUnconditionalUpdate: false,
      allowCreateOnUpdate: false,
      custom: { crdName: crd.metadata.name ?? '', schema: v.schema?.openAPIV3Schema as Record<string, unknown> | undefined, printerColumns: v.additionalPrinterColumns ?? [] },
    }));
}

/** CRD strategy validation beyond the name: a structural schema per version, exactly one storage version. */
function validateCrd(crd: KubeObject): StatusCause[] {
  const spec = specOf(crd);
  const causes: StatusCause[] = [];
  const versions = spec.versions ?? [];
  if (versions.length === 0) causes.push({ reason: 'FieldValueRequired', field: 'spec.versions', message: 'Required value: must have exactly one version marked as storage version' });
  else if (versions.filter((v) => v.storage).length !== 1) {
    causes.push({ reason: 'FieldValueInvalid', field: 'spec.versions', message: `Invalid value: ${JSON.stringify(versions)}: must have exactly one version marked as storage version` });
  }
  if (!spec.names?.kind) causes.push({ reason: 'FieldValueRequired', field: 'spec.names.kind', message: 'Required value' });
  if (!spec.names?.plural) causes.push({ reason: 'FieldValueRequired', field: 'spec.names.plural', message: 'Required value' });
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') {
    causes.push({ reason: 'FieldValueNotSupported', field: 'spec.scope', message: `Unsupported value: "${spec.scope ?? ''}": supported values: "Cluster", "Namespaced"` });
  }
  versions.forEach((v, i) => {
    const schema = v.schema?.openAPIV3Schema;
    if (!schema) {
      causes.push({ reason: 'FieldValueRequired', field: `spec.versions[${i}].schema.openAPIV3Schema`, message: 'Required value: schemas are required' });
      return;
    }
    for (const c of validateStructuralSchema(schema)) causes.push({ ...c, ...(c.field ? { field: c.field.replace('spec.versions[0]', `spec.versions[${i}]`) } : {}) });
  });
  return causes;
}

/**
 * apiextensions-apiserver in miniature: the CRD strategy (defaults, validation, initial status),
 * the naming/establishing controllers (NamesAccepted + Established conditions shortly after create),
 * serving each CRD's resources, and the finalizer controller that deletes every custom resource
 * before a deleted CRD goes away.
 */
export class CrdController {
  readonly #store: RegistryStore;
  readonly #storage: Storage;
  readonly #registry: ResourceRegistry;
  readonly #clock: Clock;

  constructor(store: RegistryStore, storage: Storage, registry: ResourceRegistry, clock: Clock) {
    this.#store = store;
    this.#storage = storage;
    this.#registry = registry;
    this.#clock = clock;
    store.setHooks(GROUP, 'customresourcedefinitions', {
      prepareCreate: (crd) => {
        const spec = specOf(crd);
        const names = (spec.names ??= {});
        if (names.kind && !names.listKind) names.listKind = `${names.kind}List`;
        if (names.kind && !names.singular) names.singular = names.kind.toLowerCase();
        spec.conversion ??= { strategy: 'None' };
        crd['spec'] = spec;
        const storageVersion = (spec.versions ?? []).find((v) => v.storage)?.name;
        crd['status'] = { conditions: null, acceptedNames: { plural: '', kind: '' }, storedVersions: storageVersion ? [storageVersion] : [] };
      },
      // The storage version of a spec update joins status.storedVersions (kube PrepareForUpdate).
      prepareUpdate: (crd, _old, subresource) => {
        if (subresource === undefined) recordStorageVersion(crd);
      },
      // storedVersions and conversion are checked on create and spec updates; `/status` edits them freely.
      validate: (crd, _old, subresource) => (subresource === 'status' ? [] : [...validateCrd(crd), ...validateConversion(crd), ...validateStoredVersions(crd)]),
      deleteFinalizers: [CLEANUP_FINALIZER],
    });
    storage.onChange((e) => {
      if (e.gr !== CRD_GR) return;
      if (e.type === 'DELETED') {
        this.#registry.removeCustom(e.object.metadata.name ?? '');
        return;
      }
      this.#serve(e.object);
      const name = e.object.metadata.name ?? '';
      if (e.object.metadata.deletionTimestamp) setImmediate(() => this.#safely(() => this.#cleanup(name)));
      else if (!this.#established(e.object)) setImmediate(() => this.#safely(() => this.#establish(name)));
    });
  }

  /** Controller work runs from timers: a failure is reported, never thrown into the event loop. */
  #safely(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      console.error('test API server: CRD controller failed', err);
    }
  }

  #crdType(): ResourceType {
    const t = this.#registry.get(GROUP, 'v1', 'customresourcedefinitions');
    if (!t) throw new Error('customresourcedefinitions is not registered');
    return t;
  }

  #established(crd: KubeObject): boolean {
    const conds = ((crd['status'] as { conditions?: { type: string; status: string }[] } | undefined)?.conditions) ?? [];
    return conds.some((c) => c.type === 'Established' && c.status === 'True');
  }

  #serve(crd: KubeObject): void {
    this.#registry.removeCustom(crd.metadata.name ?? '');
    for (const t of typesOfCrd(crd)) this.#registry.add(t);
  }

  #establish(name: string): void {
    const crd = this.#storage.get(CRD_GR, '', name);
    if (!crd || crd.metadata.deletionTimestamp || this.#established(crd)) return;
    const next = cloneJson(crd);
    const names = specOf(crd).names ?? {};
    const now = rfc3339(this.#clock.now());
    next['status'] = {
      ...(next['status'] as Record<string, unknown>),
      conditions: [
        { type: 'NamesAccepted', status: 'True', lastTransitionTime: now, reason: 'NoConflicts', message: 'no conflicts found' },
        { type: 'Established', status: 'True', lastTransitionTime: now, reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' },
      ],
      acceptedNames: names,
    };
    this.#store.update(this.#crdType(), undefined, name, next, { subresource: 'status' });
  }

  #cleanup(name: string): void {
    const crd = this.#storage.get(CRD_GR, '', name);
    if (!crd || !crd.metadata.deletionTimestamp || !(crd.metadata.finalizers ?? []).includes(CLEANUP_FINALIZER)) return;
    const spec = specOf(crd);
    const gr = `${spec.group ?? ''}/${spec.names?.plural ?? ''}`;
    for (const obj of this.#storage.list(gr)) this.#storage.remove(gr, obj);
    const next = cloneJson(crd);
    next.metadata.finalizers = (next.metadata.finalizers ?? []).filter((f) => f !== CLEANUP_FINALIZER);
    this.#store.update(this.#crdType(), undefined, name, next);
  }
}

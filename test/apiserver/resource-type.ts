/**
 * What the server knows about one served resource (a built-in or one version of a CRD): the facts
 * discovery publishes and the strategy knobs kube-apiserver's `rest.RESTCreateStrategy` /
 * `RESTUpdateStrategy` implementations differ in.
 */

/** A CRD printer column (`additionalPrinterColumns` entry). */
export interface PrinterColumn {
  readonly name: string;
  readonly type: string;
  readonly format?: string;
  readonly description?: string;
  readonly priority?: number;
  readonly jsonPath: string;
}

/** The CRD facts a served custom resource needs. */
export interface CustomResourceInfo {
  /** `metadata.name` of the CRD. */
  readonly crdName: string;
  /** The version's `schema.openAPIV3Schema` (may be undefined for schemaless legacy CRDs). */
  readonly schema: Record<string, unknown> | undefined;
  /** The version's `additionalPrinterColumns`. */
  readonly printerColumns: readonly PrinterColumn[];
}

/** How `metadata.generation` is maintained. */
export type GenerationPolicy =
  /** never set (ConfigMap, Lease, Event, RBAC…). */
  | 'none'
  /** 1 on create, +1 when anything except metadata and status changes (CronJob, Job, CRD, custom resources). */
  | 'spec';

/** One served resource at one group/version. */
export interface ResourceType {
  readonly group: string;
  readonly version: string;
  /** Plural resource name (`cronjobs`). */
  readonly resource: string;
  readonly kind: string;
  readonly listKind: string;
  readonly namespaced: boolean;
  readonly singularName: string;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  /** Subresources served, e.g. `status`, `token`. */
  readonly subresources: readonly string[];
  readonly verbs: readonly string[];
  readonly generation: GenerationPolicy;
  /** Built-ins accept PUT without `metadata.resourceVersion`; custom resources do not (422). */
  readonly allowUnconditionalUpdate: boolean;
  /** PUT of a missing object creates it (Lease, Event, RBAC objects). */
  readonly allowCreateOnUpdate: boolean;
  /** Default `propagationPolicy` of DELETE (batch/v1 Jobs orphan by default). @default Background */
  readonly defaultPropagation?: 'Background' | 'Orphan' | 'Foreground';
  /** A built-in's status as a create resets it: its zero value as Go serializes it. @default {} */
  readonly zeroStatus?: Readonly<Record<string, unknown>>;
  /** Set for custom resources. */
  readonly custom?: CustomResourceInfo;
}

/** `group/resource`: the storage key of a resource (all versions share one store, like etcd). */
export function groupResourceKey(group: string, resource: string): string {
  return `${group}/${resource}`;
}

/** `group/version` as in `apiVersion` (`v1` for the core group). */
export function apiVersionOf(type: Pick<ResourceType, 'group' | 'version'>): string {
  return type.group ? `${type.group}/${type.version}` : type.version;
}

/** True when the resource has a status subresource (main endpoint then ignores status). */
export function hasStatusSubresource(type: ResourceType): boolean {
  return type.subresources.includes('status');
}

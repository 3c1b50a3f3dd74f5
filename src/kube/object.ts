/**
 * The shapes every Kubernetes object and list shares (apimachinery `metav1`), typed just as far as
 * this project reads them. Kind-specific fields stay `unknown` until a caller narrows them.
 */

/** `metav1.OwnerReference`: what makes the garbage collector delete a child with its owner. */
export interface OwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller?: boolean;
  readonly blockOwnerDeletion?: boolean;
}

/** `metav1.ObjectMeta`, the fields this project reads or writes. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: unknown[];
}

/** Any Kubernetes object. `spec` and `status` are left to the kind's own type. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

/** `metav1.ListMeta`. */
export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

/** A LIST response. */
export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata: ListMeta;
  items: T[];
}

/** One event of a WATCH stream (`metav1.WatchEvent`); ERROR carries a `Status` as its object. */
export type WatchEvent<T extends KubeObject = KubeObject> =
  | { readonly type: 'ADDED' | 'MODIFIED' | 'DELETED'; readonly object: T }
  | { readonly type: 'BOOKMARK'; readonly object: T }
  | { readonly type: 'ERROR'; readonly object: StatusBody };

/** One entry of `Status.details.causes`. */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/** `metav1.Status`: the body of every error the API server returns. */
export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never> | ListMeta;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    uid?: string;
    causes?: StatusCause[];
    retryAfterSeconds?: number;
  };
  code: number;
}

/** `namespace/name`, or `name` for cluster-scoped objects: the key of caches and work queues. */
export function objectKey(meta: Pick<ObjectMeta, 'namespace' | 'name'>): string {
  return meta.namespace ? `${meta.namespace}/${meta.name ?? ''}` : (meta.name ?? '');
}

/** Splits a key made by {@link objectKey}. */
export function splitObjectKey(key: string): { namespace?: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** The owner reference with `controller: true`, if any (there is at most one). */
export function controllerOf(meta: ObjectMeta): OwnerReference | undefined {
  return meta.ownerReferences?.find((ref) => ref.controller === true);
}

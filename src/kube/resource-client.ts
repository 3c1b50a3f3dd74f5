/**
 * A typed client for one resource (`cronjobs.batch/v1`, `backupschedules.kubelings.dev/v1alpha1`…):
 * paths, verbs and query parameters as the API server expects them.
 */
import type { KubeClient } from './kube-client.ts';
import type { KubeList, KubeObject, StatusBody, WatchEvent } from './object.ts';

/** Identifies a resource type. */
export interface ResourceType {
  /** API group; `''` for the core group. */
  readonly group: string;
  readonly version: string;
  /** Lower-case plural used in paths, e.g. `cronjobs`. */
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

/** Identifies one object. `namespace` is required for namespaced resources. */
export interface ObjectRef {
  readonly namespace?: string;
  readonly name: string;
}

/** Common request options. */
export interface CallOptions {
  /** Aborts the request. @default none */
  readonly signal?: AbortSignal;
}

/** Options for one LIST page. */
export interface ListOptions extends CallOptions {
  /** Namespace to list; omitted for all namespaces. @default all namespaces */
  readonly namespace?: string;
  /** Page size. @default no limit (server decides) */
  readonly limit?: number;
  /** Continue token from the previous page. @default none */
  readonly continue?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** `''`/omitted = consistent read; `'0'` = any cached version. @default omitted */
  readonly resourceVersion?: string;
  /** `NotOlderThan` or `Exact`. @default omitted */
  readonly resourceVersionMatch?: string;
  /** The page's answer may not pass this many bytes (else `ResponseTooLargeError`, src/kube/kube-client.ts). @default no limit */
  readonly maxBytes?: number;
}

/** Options for a WATCH. */
export interface WatchOptions extends CallOptions {
  /** Namespace to watch. @default all namespaces */
  readonly namespace?: string;
  /** Start after this resourceVersion. @default omitted (server picks "now" and sends synthetic ADDs) */
  readonly resourceVersion?: string;
  /** Ask for BOOKMARK events. @default true */
  readonly allowWatchBookmarks?: boolean;
  /** Server-side stream lifetime. @default server default */
  readonly timeoutSeconds?: number;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
}

/** Options for writes. */
export interface WriteOptions extends CallOptions {
  /** `fieldManager` query parameter. @default none */
  readonly fieldManager?: string;
  /** Server-side dry run. @default false */
  readonly dryRun?: boolean;
}

/** The patch flavours the API server accepts from JSON clients. */
export type PatchType = 'merge' | 'json' | 'strategic';

const PATCH_CONTENT_TYPES: Readonly<Record<PatchType, string>> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
};

/** Options for DELETE (`metav1.DeleteOptions`). */
export interface DeleteOptions extends CallOptions {
  /** @default the resource's default (Background for most) */
  readonly propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  /** Only delete this exact object. @default none */
  readonly preconditions?: { readonly uid?: string; readonly resourceVersion?: string };
  readonly gracePeriodSeconds?: number;
  readonly dryRun?: boolean;
}

/** Typed verbs for one resource. */
export class ResourceClient<T extends KubeObject> {
  readonly type: ResourceType;
  readonly #client: KubeClient;
  readonly #prefix: string;

  constructor(client: KubeClient, type: ResourceType) {
    for (const field of ['version', 'plural', 'kind'] as const) {
      if (!type[field]) throw new TypeError(`ResourceClient: ${field} must be a non-empty string`);
    }
    this.#client = client;
    this.type = type;
    this.#prefix = type.group ? `/apis/${type.group}/${type.version}` : `/api/${type.version}`;
  }

  /** `apiVersion` of this resource's objects. */
  get apiVersion(): string {
    return this.type.group ? `${this.type.group}/${this.type.version}` : this.type.version;
  }

  /** `apiVersion` and `kind` of this resource's objects (LIST items of built-in kinds omit them). */
  typeMeta(): { readonly apiVersion: string; readonly kind: string } {
    return { apiVersion: this.apiVersion, kind: this.type.kind };
  }

  /** Path of the collection (all namespaces when `namespace` is undefined). */
  collectionPath(namespace?: string): string {
    if (namespace !== undefined && !this.type.namespaced) {
      throw new TypeError(`${this.type.plural}: is cluster-scoped, namespace must be omitted (got "${namespace}")`);
    }
    return namespace === undefined
      ? `${this.#prefix}/${this.type.plural}`
      : `${this.#prefix}/namespaces/${encodeURIComponent(namespace)}/${this.type.plural}`;
  }

  /** Path of one object, optionally a subresource. */
  objectPath(ref: ObjectRef, subresource?: string): string {
    if (!ref.name) throw new TypeError(`${this.type.plural}: name must be a non-empty string`);
    if (this.type.namespaced && !ref.namespace) {
      throw new TypeError(`${this.type.plural}: namespace is required for "${ref.name}" (the resource is namespaced)`);
    }
    const base = `${this.collectionPath(this.type.namespaced ? ref.namespace : undefined)}/${encodeURIComponent(ref.name)}`;
    return subresource ? `${base}/${subresource}` : base;
  }

  async get(ref: ObjectRef, options: CallOptions = {}): Promise<T> {
    return this.#client.request<T>('GET', this.objectPath(ref), withSignal({}, options));
  }

  /** One page of a LIST. */
  async list(options: ListOptions = {}): Promise<KubeList<T>> {
    return this.#client.request<KubeList<T>>('GET', this.collectionPath(options.namespace), withSignal({
      query: {
        limit: options.limit,
        continue: options.continue,
        labelSelector: options.labelSelector,
        fieldSelector: options.fieldSelector,
        resourceVersion: options.resourceVersion,
        resourceVersionMatch: options.resourceVersionMatch,
      },
      ...(options.maxBytes !== undefined ? { maxBodyBytes: options.maxBytes } : {}),
    }, options));
  }

  async create(obj: T, options: WriteOptions = {}): Promise<T> {
    return this.#client.request<T>('POST', this.collectionPath(this.type.namespaced ? requireNamespace(this.type, obj) : undefined), withSignal({ body: obj, query: writeQuery(options) }, options));
  }

  /** PUT: optimistic concurrency through `metadata.resourceVersion` (409 Conflict when stale). */
  async update(obj: T, options: WriteOptions = {}): Promise<T> {
    return this.#client.request<T>('PUT', this.objectPath(refOf(obj)), withSignal({ body: obj, query: writeQuery(options) }, options));
  }

  /** PUT on the `status` subresource: only `status` changes. */
  async updateStatus(obj: T, options: WriteOptions = {}): Promise<T> {
    return this.#client.request<T>('PUT', this.objectPath(refOf(obj), 'status'), withSignal({ body: obj, query: writeQuery(options) }, options));
  }

  async patch(ref: ObjectRef, patch: unknown, options: WriteOptions & { readonly type?: PatchType; readonly subresource?: string } = {}): Promise<T> {
    const type = options.type ?? 'merge';
    return this.#client.request<T>('PATCH', this.objectPath(ref, options.subresource), withSignal({
      body: patch, contentType: PATCH_CONTENT_TYPES[type], query: writeQuery(options),
    }, options));
  }

  /** DELETE; resolves with the object (when deletion is deferred by finalizers) or a `Status`. */
  async delete(ref: ObjectRef, options: DeleteOptions = {}): Promise<T | StatusBody> {
    const body = {
      kind: 'DeleteOptions', apiVersion: 'v1',
      ...(options.propagationPolicy ? { propagationPolicy: options.propagationPolicy } : {}),
      ...(options.preconditions ? { preconditions: options.preconditions } : {}),
      ...(options.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: options.gracePeriodSeconds } : {}),
      ...(options.dryRun ? { dryRun: ['All'] } : {}),
    };
    return this.#client.request<T | StatusBody>('DELETE', this.objectPath(ref), withSignal({ body }, options));
  }

  /** A WATCH stream; ends when the server closes it or `signal` aborts. */
  async *watch(options: WatchOptions = {}): AsyncGenerator<WatchEvent<T>> {
    yield* this.#client.watch<T>(this.collectionPath(options.namespace), withSignal({
      query: {
        resourceVersion: options.resourceVersion,
        allowWatchBookmarks: options.allowWatchBookmarks ?? true,
        timeoutSeconds: options.timeoutSeconds,
        labelSelector: options.labelSelector,
        fieldSelector: options.fieldSelector,
      },
    }, options));
  }
}

function withSignal<O extends object>(opts: O, call: CallOptions): O & { signal?: AbortSignal } {
  return call.signal ? { ...opts, signal: call.signal } : opts;
}

function writeQuery(options: WriteOptions): Record<string, string | undefined> {
  return { fieldManager: options.fieldManager, dryRun: options.dryRun ? 'All' : undefined };
}

function requireNamespace(type: ResourceType, obj: KubeObject): string {
  const ns = obj.metadata?.namespace;
  if (!ns) throw new TypeError(`${type.plural}: metadata.namespace is required (the resource is namespaced)`);
  return ns;
}

function refOf(obj: KubeObject): ObjectRef {
  const name = obj.metadata?.name;
  if (!name) throw new TypeError('metadata.name is required for update');
  return obj.metadata.namespace ? { namespace: obj.metadata.namespace, name } : { name };
}

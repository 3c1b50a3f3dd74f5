import { goStrconvQuote } from '../../src/api/go-quote.ts';
import { statusErrors } from '../../src/kube/api-status-error.ts';
import type { KubeObject, StatusBody } from '../../src/kube/object.ts';
import type { Clock } from '../../src/runtime/clock.ts';
import { fail, serverErrors } from './errors.ts';
import { cloneJson } from './json-equal.ts';
import { generateName, prepareCreateMeta, prepareUpdateMeta, rfc3339, unchanged } from './object-meta.ts';
import { checkTypeMeta, decodeBuiltin, decodeCustomResource, validateObject, type FieldValidation, type KindValidator } from './object-pipeline.ts';
import { trackUpdate } from './managed-fields/index.ts';
import { apiVersionOf, groupResourceKey, type ResourceType } from './resource-type.ts';
import type { Storage } from './storage.ts';
import type { Admission } from './owner-reference-admission.ts';

/** Options every write takes. */
export interface WriteOptions {
  /** `dryRun=All`: run everything, store nothing. @default false */
  readonly dryRun?: boolean;
  /** @default 'Warn' (the server default since 1.27) */
  readonly fieldValidation?: FieldValidation;
  /** Admission run after the strategy prepared the object, before validation. @default none */
  readonly admit?: Admission;
  /**
   * Mutating admission, run on the decoded object before the strategy (kube-apiserver's handlers call
   * mutating webhooks before `PrepareForCreate`/`PrepareForUpdate`, so generation and the no-op check
   * see the mutated object). @default none
   */
  readonly mutate?: Admission;
  /**
   * Throws unless the requester may `create`, called once a PUT or apply that creates the object has
   * validated it (kube's `withAuthorization` around the create validation of `rest.Update`). @default none
   */
  readonly authorizeCreate?: () => void;
  /**
   * The field manager recorded in `metadata.managedFields` (operation Update); without one the stored
   * managedFields are carried over unchanged (the server's own controllers). @default none
   */
  readonly fieldManager?: string;
  /** The body's managedFields come from a server-side apply: store them as they are. @default false */
  readonly applied?: boolean;
  /**
   * Update only: the stored object as the request's version sees it (converted from the storage
   * version, see `conversion/`). @default the object read from storage
   */
  readonly current?: KubeObject;
}

/** The result of a create/update. */
export interface WriteResult {
  readonly object: KubeObject;
  /** True when an update created the object (201). */
  readonly created: boolean;
  /** `Warning` header texts. */
  readonly warnings: string[];
}

/** DELETE options (`metav1.DeleteOptions`). */
export interface DeleteOptions {
  readonly dryRun?: boolean;
  readonly propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  readonly preconditions?: { readonly uid?: string; readonly resourceVersion?: string };
}

/** The result of a delete: the object when it still exists (finalizers pending), else a Success Status. */
export type DeleteResult = { readonly kind: 'pending'; readonly object: KubeObject } | { readonly kind: 'deleted'; readonly status: StatusBody; readonly object: KubeObject };

/** Kind-specific strategy hooks (CRDs, namespaces). */
export interface KindHooks {
  /** Mutates a new object before validation (`PrepareForCreate`). */
  readonly prepareCreate?: (obj: KubeObject) => void;
  readonly validate?: KindValidator;
  /** Finalizers the kind adds on delete (CRD cleanup). */
  readonly deleteFinalizers?: readonly string[];
  /** Mutates an update after the generic rules (`PrepareForUpdate`); `subresource` as requested. */
  readonly prepareUpdate?: (obj: KubeObject, old: KubeObject, subresource: string | undefined) => void;
  /** Mutates an object being marked for deletion (namespace phase Terminating). */
  readonly prepareDelete?: (obj: KubeObject) => void;
  /** True when a deleting object must stay although metadata.finalizers is empty (namespace spec.finalizers). */
  readonly blocksRemoval?: (obj: KubeObject) => boolean;
}

/**
 * kube's `genericregistry.Store`: create/update/delete with the strategy rules (system metadata,
 * status subresource, generation, preconditions, finalizers, dryRun), on top of {@link Storage}.
 */
export class RegistryStore {
  readonly #storage: Storage;
  readonly #clock: Clock;
  readonly #hooks = new Map<string, KindHooks>();
  readonly #ratcheting: boolean;

  /** `ratcheting`: CRD validation ratcheting on updates (Kubernetes 1.30+; off plays 1.28/1.29). */
  constructor(storage: Storage, clock: Clock, ratcheting = true) {
    this.#storage = storage;
    this.#clock = clock;
    this.#ratcheting = ratcheting;
  }

  /** Installs hooks for `group/resource`. */
  setHooks(group: string, resource: string, hooks: KindHooks): void {
    this.#hooks.set(groupResourceKey(group, resource), hooks);
  }

  get storage(): Storage {
    return this.#storage;
  }

  #gr(type: ResourceType): { group: string; resource: string } {
    return { group: type.group, resource: type.resource };
  }

  #checkNamespace(type: ResourceType, namespace: string | undefined, name: string): void {
    if (!type.namespaced || namespace === undefined) return;
    const ns = this.#storage.get('/namespaces', '', namespace);
    if (!ns) fail(statusErrors.notFound({ group: '', resource: 'namespaces' }, namespace));
    if (ns.metadata.deletionTimestamp) fail(serverErrors.namespaceTerminating(this.#gr(type), name, namespace));
  }

  #decode(type: ResourceType, obj: KubeObject, opts: WriteOptions): string[] {
    checkTypeMeta(type, obj);
    if (type.custom) return decodeCustomResource(type, obj, opts.fieldValidation ?? 'Warn');
    return decodeBuiltin(type, obj, opts.fieldValidation ?? 'Warn');
  }

  /** The managedFields of a write (see {@link WriteOptions.fieldManager}); undefined removes them. */
  #managedFields(type: ResourceType, old: KubeObject | undefined, next: KubeObject, sent: unknown, opts: WriteOptions & { readonly subresource?: string }): void {
    const managed = opts.applied
      ? sent
      : opts.fieldManager !== undefined
        ? trackUpdate({ type, manager: opts.fieldManager, apiVersion: apiVersionOf(type), now: rfc3339(this.#clock.now()), ...(opts.subresource ? { subresource: opts.subresource } : {}) }, old, next, sent)
        : old?.metadata.managedFields;
    if (Array.isArray(managed) && managed.length > 0) next.metadata.managedFields = managed;
    else delete next.metadata.managedFields;
  }

  /** POST: creates `body` in `namespace` (undefined for cluster-scoped). */
  create(type: ResourceType, namespace: string | undefined, body: KubeObject, opts: WriteOptions = {}): WriteResult {
    const obj = body;
    const warnings = this.#decode(type, obj, opts);
    opts.mutate?.(obj, undefined);
    const meta = obj.metadata;
    const sentManagedFields = meta.managedFields;
    if (type.namespaced) {
      if (meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== namespace) {
        fail(statusErrors.badRequest('the namespace of the provided object does not match the namespace sent on the request'));
      }
      if (namespace !== undefined) meta.namespace = namespace;
    }
    if (!meta.name && meta.generateName) meta.name = generateName(meta.generateName);
    if (!meta.name) {
      fail(statusErrors.invalid({ group: type.group, kind: type.kind }, '', [{ reason: 'FieldValueRequired', field: 'metadata.name', message: 'Required value: name or generateName is required' }]));
    }
    const name = meta.name;
    this.#checkNamespace(type, namespace, name);
    prepareCreateMeta(type, obj, this.#clock.now());
    this.#managedFields(type, undefined, obj, sentManagedFields, opts);
    const hooks = this.#hooks.get(groupResourceKey(type.group, type.resource));
    hooks?.prepareCreate?.(obj);
    opts.admit?.(obj, undefined);
    validateObject(type, obj, undefined, hooks?.validate);
    opts.authorizeCreate?.();
    const gr = groupResourceKey(type.group, type.resource);
    if (this.#storage.get(gr, meta.namespace ?? '', name)) fail(statusErrors.alreadyExists(this.#gr(type), name));
    if (opts.dryRun) return { object: obj, created: true, warnings };
    return { object: this.#storage.create(gr, obj), created: true, warnings };
  }

  /** GET of one object; 404 when missing. */
  get(type: ResourceType, namespace: string | undefined, name: string): KubeObject {
    const obj = this.#storage.get(groupResourceKey(type.group, type.resource), type.namespaced ? (namespace ?? '') : '', name);
    if (!obj) fail(statusErrors.notFound(this.#gr(type), name));
    return obj;
  }

  /**
   * PUT (and the second half of PATCH): replaces the object, honouring `metadata.resourceVersion` as
   * a precondition. `subresource` is `status` for the status endpoint.
   */
  update(type: ResourceType, namespace: string | undefined, name: string, body: KubeObject, opts: WriteOptions & { readonly subresource?: string } = {}): WriteResult {
    const warnings = this.#decode(type, body, opts);
    const meta = body.metadata;
    if (meta.name !== undefined && meta.name !== name) fail(statusErrors.badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${name})`));
    if (type.namespaced && meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== namespace) {
      fail(statusErrors.badRequest('the namespace of the provided object does not match the namespace sent on the request'));
    }
    const gr = groupResourceKey(type.group, type.resource);
    const ns = type.namespaced ? (namespace ?? '') : '';
    const old = opts.current ?? this.#storage.get(gr, ns, name);
    if (!old) {
      if (!type.allowCreateOnUpdate || opts.subresource) fail(statusErrors.notFound(this.#gr(type), name));
      meta.name = name;
      const result = this.create(type, namespace, body, { ...opts, fieldValidation: 'Ignore' });
      return { ...result, warnings: [...warnings, ...result.warnings] };
    }
    const rv = meta.resourceVersion;
    if (rv === undefined || rv === '') {
      if (!type.allowUnconditionalUpdate) {
        fail(statusErrors.invalid({ group: type.group, kind: type.resource }, name, [{ reason: 'FieldValueInvalid', field: 'metadata.resourceVersion', message: 'Invalid value: 0x0: must be specified for an update' }]));
      }
    } else if (rv !== old.metadata.resourceVersion) {
      fail(statusErrors.conflict(this.#gr(type), name));
    }
    if (meta.uid !== undefined && meta.uid !== '' && meta.uid !== old.metadata.uid) {
      fail(serverErrors.preconditionFailed(this.#gr(type), name, 'UID', meta.uid, old.metadata.uid ?? ''));
    }
    meta.name = name;
    opts.mutate?.(body, old);
    const sentManagedFields = meta.managedFields;
    const next = prepareUpdateMeta(type, body, old, opts.subresource);
    next.metadata.resourceVersion = old.metadata.resourceVersion;
    this.#managedFields(type, old, next, sentManagedFields, opts);
    const hooks = this.#hooks.get(gr);
    hooks?.prepareUpdate?.(next, old, opts.subresource);
    if (old.metadata.deletionTimestamp) {
      const added = [...new Set((next.metadata.finalizers ?? []).filter((f) => !(old.metadata.finalizers ?? []).includes(f)))].sort();
      if (added.length > 0) {
        // apimachinery formats the sorted set with Go's %#v: []string{"a", "b"}.
        const goSlice = `[]string{${added.map(goStrconvQuote).join(', ')}}`;
        fail(statusErrors.invalid({ group: type.group, kind: type.kind }, name, [{ reason: 'FieldValueForbidden', field: 'metadata.finalizers', message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${goSlice}` }]));
      }
    }
    opts.admit?.(next, old);
    validateObject(type, next, old, hooks?.validate, opts.subresource, this.#ratcheting);
    if (unchanged(next, old)) return { object: old, created: false, warnings };
    if (opts.dryRun) return { object: next, created: false, warnings };
    if (next.metadata.deletionTimestamp && (next.metadata.finalizers ?? []).length === 0 && !hooks?.blocksRemoval?.(next)) {
      // The last finalizer is gone: the update completes the deletion, one DELETED event (kube `shouldDeleteDuringUpdate`).
      return { object: this.#storage.remove(gr, next), created: false, warnings };
    }
    return { object: this.#storage.update(gr, next, old), created: false, warnings };
  }

  /** DELETE with preconditions, propagation policy and finalizers. */
  delete(type: ResourceType, namespace: string | undefined, name: string, opts: DeleteOptions = {}): DeleteResult {
    const gr = groupResourceKey(type.group, type.resource);
    const old = this.get(type, namespace, name);
    const pre = opts.preconditions;
    if (pre?.uid !== undefined && pre.uid !== old.metadata.uid) fail(serverErrors.deletePreconditionFailed(type.group, type.kind, name, 'UID', pre.uid, old.metadata.uid ?? ''));
    if (pre?.resourceVersion !== undefined && pre.resourceVersion !== old.metadata.resourceVersion) {
      fail(serverErrors.deletePreconditionFailed(type.group, type.kind, name, 'ResourceVersion', pre.resourceVersion, old.metadata.resourceVersion ?? ''));
    }
    const hooks = this.#hooks.get(gr);
    const policy = opts.propagationPolicy ?? type.defaultPropagation ?? 'Background';
    const finalizers = new Set(old.metadata.finalizers ?? []);
    // The policy of this request replaces the GC finalizers of an earlier one (kube `deletionFinalizersForGarbageCollection`).
    if (policy === 'Orphan') {
      finalizers.add('orphan');
      finalizers.delete('foregroundDeletion');
    } else if (policy === 'Foreground') {
      finalizers.add('foregroundDeletion');
      finalizers.delete('orphan');
    } else if (opts.propagationPolicy === 'Background') {
      finalizers.delete('orphan');
      finalizers.delete('foregroundDeletion');
    }
    for (const f of hooks?.deleteFinalizers ?? []) finalizers.add(f);
    // Orphan/Foreground always go through a finalizer that the garbage collector removes, even without dependents.
    const next: KubeObject = cloneJson(old);
    if (finalizers.size > 0 || hooks?.blocksRemoval?.(old)) {
      next.metadata.finalizers = [...finalizers];
      if (!next.metadata.deletionTimestamp) {
        next.metadata.deletionTimestamp = rfc3339(this.#clock.now());
        next.metadata.deletionGracePeriodSeconds = 0;
      }
      hooks?.prepareDelete?.(next);
      if (opts.dryRun || unchanged(next, old)) return { kind: 'pending', object: opts.dryRun ? next : old };
      return { kind: 'pending', object: this.#storage.update(gr, next, old) };
    }
    const status = serverErrors.deleted(this.#gr(type), name, old.metadata.uid);
    if (opts.dryRun) return { kind: 'deleted', status, object: old };
    return { kind: 'deleted', status, object: this.#storage.remove(gr, old) };
  }
}

import { isConflict, statusErrors } from '../../../src/kube/api-status-error.ts';
import type { KubeObject, StatusCause } from '../../../src/kube/object.ts';
import { fail, serverErrors } from '../errors.ts';
import { parseBody, readBody, sendJson } from '../http-io.ts';
import { cloneJson } from '../json-equal.ts';
import type { FieldValidation } from '../object-pipeline.ts';
import { applyConfiguration } from '../managed-fields/index.ts';
import { rfc3339 } from '../object-meta.ts';
import { jsonPatch, mergePatch, PatchApplyError, strategicMergePatch } from '../patch.ts';
import type { DeleteOptions, WriteOptions } from '../registry-store.ts';
import { apiVersionOf, groupResourceKey } from '../resource-type.ts';
import type { ResourceRequest, ServerContext } from '../server-context.ts';
import { fieldRewriteAdmission } from '../field-rewrites.ts';
import { ownerReferenceAdmission } from '../owner-reference-admission.ts';
import { authorize } from '../rbac/index.ts';
import { rbacObjects } from '../rbac-cache.ts';
import { requestPredicate, sendObject, sendStored } from './read.ts';
import { convertingCreate, convertingUpdate, oneToRequestVersion, readCurrent, toRequestVersion, writeNeedsConversion, type KnownCurrent } from '../conversion/index.ts';
import { writeScale } from './scale.ts';

/**
 * The admission of a write: mutating (the configured field drops and mutations, main resource only;
 * run before the strategy, as kube-apiserver does), and validating (OwnerReferencesPermissionEnforcement
 * when on).
 */
function admission(ctx: ServerContext, r: ResourceRequest): Pick<WriteOptions, 'admit' | 'mutate'> {
  const mutate = r.info.subresource ? undefined : fieldRewriteAdmission(r.type, ctx.droppedFields, ctx.fieldMutations);
  return {
    ...(mutate ? { mutate } : {}),
    ...(ctx.enforceOwnerReferencePermissions ? { admit: ownerReferenceAdmission(ctx.registry, ctx.storage, r.type, r.namespace, r.user) } : {}),
  };
}

/** A PUT or apply that creates the object also needs `create` (kube `handlers/update.go` `withAuthorization`). */
function authorizeCreate(ctx: ServerContext, r: ResourceRequest): Pick<WriteOptions, 'authorizeCreate'> {
  const name = r.info.pathName ?? '';
  return {
    authorizeCreate: () => {
      const attrs = { user: { name: r.user.name, groups: [...r.user.groups] }, verb: 'create', apiGroup: r.type.group, resource: r.type.resource, name, path: r.info.path, isResourceRequest: true, ...(r.namespace !== undefined ? { namespace: r.namespace } : {}) };
      if (!authorize(rbacObjects(ctx.storage), attrs).allowed) fail(serverErrors.createOnUpdateForbidden({ group: r.type.group, resource: r.type.resource }, name));
    },
  };
}

/**
 * The manager of a non-apply write: `fieldManager`, else the User-Agent up to its first `/`
 * (kube `managerOrUserAgent`), printable characters only, at most 128 bytes.
 */
function updateManager(r: ResourceRequest): Pick<WriteOptions, 'fieldManager'> {
  const given = r.query.get('fieldManager');
  if (given) return { fieldManager: given };
  let manager = '';
  for (const ch of (r.req.headers['user-agent'] ?? '').split('/')[0] ?? '') {
    if (/\p{C}/u.test(ch)) continue;
    if (Buffer.byteLength(manager + ch) > 128) break;
    manager += ch;
  }
  return { fieldManager: manager };
}

/**
 * `ValidateCreateOptions` / `ValidateUpdateOptions` / `ValidatePatchOptions` of the write's field
 * manager and `force`: 422 on the options kind, as kube answers before touching the object.
 */
function validateOptions(q: URLSearchParams, kind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions', apply = false): void {
  const causes: StatusCause[] = [];
  const manager = q.get('fieldManager') ?? '';
  if (kind === 'PatchOptions' && !apply && q.has('force')) causes.push({ reason: 'FieldValueForbidden', field: 'force', message: 'Forbidden: may not be specified for non-apply patch' });
  if (apply && manager === '') causes.push({ reason: 'FieldValueRequired', field: 'fieldManager', message: 'Required value: is required for apply patch' });
  if (Buffer.byteLength(manager) > 128) causes.push({ reason: 'FieldValueTooLong', field: 'fieldManager', message: 'Too long: may not be more than 128 bytes' });
  else if (/\p{C}/u.test(manager)) causes.push({ reason: 'FieldValueInvalid', field: 'fieldManager', message: `Invalid value: ${JSON.stringify(manager)}: must only contain printable characters` });
  if (causes.length > 0) fail(statusErrors.invalid({ group: 'meta.k8s.io', kind }, '', causes));
}

function writeOptions(q: URLSearchParams): WriteOptions {
  const dryRun = q.getAll('dryRun');
  for (const d of dryRun) if (d !== 'All') fail(statusErrors.badRequest(`dryRun: Unsupported value: "${d}": supported values: "All"`));
  const fv = q.get('fieldValidation');
  if (fv !== null && fv !== 'Strict' && fv !== 'Warn' && fv !== 'Ignore') {
    fail(statusErrors.badRequest(`fieldValidation: Unsupported value: "${fv}": supported values: "Ignore", "Strict", "Warn"`));
  }
  return { dryRun: dryRun.length > 0, fieldValidation: (fv ?? 'Warn') as FieldValidation };
}

/** The stored object a write addresses, if any (in whatever version it was stored). */
function storedOf(ctx: ServerContext, r: ResourceRequest): KubeObject | undefined {
  return ctx.storage.get(groupResourceKey(r.type.group, r.type.resource), r.type.namespaced ? (r.namespace ?? '') : '', r.info.pathName ?? '');
}

async function readObject(r: ResourceRequest): Promise<KubeObject> {
  const body = parseBody(await readBody(r.req), r.req.headers['content-type']);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) fail(statusErrors.badRequest(`Object 'Kind' is missing in '${JSON.stringify(body)}'`));
  return body as KubeObject;
}

/** POST to a collection. */
export async function handleCreate(ctx: ServerContext, r: ResourceRequest): Promise<void> {
  const body = await readObject(r);
  validateOptions(r.query, 'CreateOptions');
  const opts = { ...writeOptions(r.query), ...admission(ctx, r), ...updateManager(r) };
  const result = writeNeedsConversion(ctx, r.type) ? await convertingCreate(ctx, r.type, r.namespace, body, opts) : ctx.store.create(r.type, r.namespace, body, opts);
  sendObject(ctx, r, 201, result.object, result.warnings);
}

/** PUT of an object or its status. */
export async function handleUpdate(ctx: ServerContext, r: ResourceRequest): Promise<void> {
  const body = await readObject(r);
  validateOptions(r.query, 'UpdateOptions');
  if (r.info.subresource === 'scale') return writeScale(ctx, r, { scale: body }, { ...writeOptions(r.query), ...admission(ctx, r), ...updateManager(r) });
  const opts = { ...writeOptions(r.query), ...admission(ctx, r), ...authorizeCreate(ctx, r), ...updateManager(r), ...(r.info.subresource ? { subresource: r.info.subresource } : {}) };
  const name = r.info.pathName ?? '';
  const result = writeNeedsConversion(ctx, r.type, storedOf(ctx, r)) ? await convertingUpdate(ctx, r.type, r.namespace, name, body, opts) : ctx.store.update(r.type, r.namespace, name, body, opts);
  sendObject(ctx, r, result.created ? 201 : 200, result.object, result.warnings);
}

/**
 * PATCH: merge, JSON, strategic merge (built-ins only, like kube) and server-side apply
 * (`application/apply-patch+yaml`, with field ownership in `metadata.managedFields`).
 */
export async function handlePatch(ctx: ServerContext, r: ResourceRequest): Promise<void> {
  const contentType = (r.req.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
  const name = r.info.pathName ?? '';
  const raw = await readBody(r.req);
  const patch = parseBody(raw, contentType === 'application/apply-patch+yaml' ? contentType : 'application/json');
  validateOptions(r.query, 'PatchOptions', contentType === 'application/apply-patch+yaml');
  const opts = { ...writeOptions(r.query), ...admission(ctx, r) };
  const subresource = r.info.subresource ? { subresource: r.info.subresource } : {};
  if (r.info.subresource === 'scale') return writeScale(ctx, r, { patch, contentType }, { ...opts, ...updateManager(r) });
  if (contentType === 'application/apply-patch+yaml') return applyPatch(ctx, r, patch, opts);
  const patchOpts = { ...opts, ...updateManager(r), ...subresource };
  for (let attempt = 1; ; attempt++) {
    const stored = ctx.store.get(r.type, r.namespace, name);
    const known = writeNeedsConversion(ctx, r.type, stored) ? await readCurrent(ctx, r.type, r.namespace, name) : undefined;
    const { obj, preconditioned } = patched(r, contentType, patch, known?.current ?? stored);
    try {
      const result = known ? await convertingUpdate(ctx, r.type, r.namespace, name, obj, patchOpts, known) : ctx.store.update(r.type, r.namespace, name, obj, patchOpts);
      return sendObject(ctx, r, 200, result.object, result.warnings);
    } catch (err) {
      // Another write got in while the webhook converted: like kube's GuaranteedUpdate, a patch without
      // a resourceVersion is applied again to the newer object.
      if (!known || preconditioned || attempt >= 5 || !isConflict(err)) throw err;
    }
  }
}

/** The object a non-apply patch makes of `current`; `preconditioned` when the patch asks for a resourceVersion `current` does not have. */
function patched(r: ResourceRequest, contentType: string, patch: unknown, current: KubeObject): { obj: KubeObject; preconditioned: boolean } {
  let next: unknown;
  try {
    switch (contentType) {
      case 'application/merge-patch+json':
        next = mergePatch(cloneJson(current), patch);
        break;
      case 'application/json-patch+json':
        next = jsonPatch(current, patch);
        break;
      case 'application/strategic-merge-patch+json':
        if (r.type.custom) {
          fail({ ...statusErrors.badRequest(''), code: 415, reason: 'UnsupportedMediaType', message: `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml` });
        }
        next = strategicMergePatch(cloneJson(current), patch);
        break;
      default:
        fail({ ...serverErrors.unsupportedMediaType(contentType), message: `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml${r.type.custom ? '' : ', application/strategic-merge-patch+json'}` });
    }
  } catch (err) {
    if (err instanceof PatchApplyError) fail(serverErrors.patchRejected());
    throw err;
  }
  if (next === null || typeof next !== 'object' || Array.isArray(next)) fail(serverErrors.patchRejected());
  const obj = next as KubeObject;
  if (typeof obj.metadata !== 'object' || obj.metadata === null) obj.metadata = {};
  // A patch without resourceVersion applies to the current object; one with it is a precondition
  // (which an object newer than the patch's version fails, also on a retry).
  const rv = obj.metadata.resourceVersion;
  if (rv === undefined || rv === null) obj.metadata.resourceVersion = current.metadata.resourceVersion ?? '';
  return { obj, preconditioned: rv !== undefined && rv !== null && rv !== current.metadata.resourceVersion };
}

/**
 * Server-side apply: `fieldManager` is required, `force=true` takes over fields other managers own;
 * an apply to a missing object creates it (which needs `create` permission).
 */
async function applyPatch(ctx: ServerContext, r: ResourceRequest, config: unknown, opts: WriteOptions): Promise<void> {
  const manager = r.query.get('fieldManager') ?? '';
  if (config === null || typeof config !== 'object' || Array.isArray(config)) fail(statusErrors.badRequest(`error decoding YAML: the applied configuration is not an object`));
  const name = r.info.pathName ?? '';
  const stored = storedOf(ctx, r);
  if (!stored && r.info.subresource) fail(statusErrors.notFound({ group: r.type.group, resource: r.type.resource }, name));
  const converting = writeNeedsConversion(ctx, r.type, stored);
  const known: KnownCurrent | undefined = converting && stored ? await readCurrent(ctx, r.type, r.namespace, name) : undefined;
  const existing = known?.current ?? stored;
  const write = { type: r.type, manager, apiVersion: apiVersionOf(r.type), now: rfc3339(ctx.clock.now()), ...(r.info.subresource ? { subresource: r.info.subresource } : {}) };
  const outcome = applyConfiguration(write, existing, config as KubeObject, r.query.get('force') === 'true');
  if (!outcome.ok) fail(outcome.status);
  const obj = outcome.object;
  if (!existing) {
    obj.metadata.name = name;
    const createOpts = { ...opts, ...authorizeCreate(ctx, r), applied: true };
    const result = converting ? await convertingCreate(ctx, r.type, r.namespace, obj, createOpts) : ctx.store.create(r.type, r.namespace, obj, createOpts);
    return sendObject(ctx, r, 201, result.object, result.warnings);
  }
  const updateOpts = { ...opts, applied: true, ...(r.info.subresource ? { subresource: r.info.subresource } : {}) };
  const result = known ? await convertingUpdate(ctx, r.type, r.namespace, name, obj, updateOpts, known) : ctx.store.update(r.type, r.namespace, name, obj, updateOpts);
  sendObject(ctx, r, 200, result.object, result.warnings);
}

async function deleteOptions(r: ResourceRequest): Promise<DeleteOptions & { dryRun: boolean }> {
  const raw = await readBody(r.req);
  const body = raw.length > 0 ? (parseBody(raw, r.req.headers['content-type']) as Record<string, unknown> | null) : null;
  const q = r.query;
  const dryRun = [...q.getAll('dryRun'), ...((body?.['dryRun'] as string[] | undefined) ?? [])];
  let policy = (q.get('propagationPolicy') ?? (body?.['propagationPolicy'] as string | undefined)) as DeleteOptions['propagationPolicy'] | undefined;
  const orphan = q.get('orphanDependents') ?? (body?.['orphanDependents'] !== undefined ? String(body['orphanDependents']) : null);
  if (policy === undefined && orphan !== null) policy = orphan === 'true' ? 'Orphan' : 'Background';
  if (policy !== undefined && !['Background', 'Foreground', 'Orphan'].includes(policy)) {
    fail(statusErrors.invalid({ group: 'meta.k8s.io', kind: 'DeleteOptions' }, '', [{ reason: 'FieldValueNotSupported', field: 'propagationPolicy', message: `Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan"` }]));
  }
  const pre = (body?.['preconditions'] as { uid?: string; resourceVersion?: string } | undefined) ?? undefined;
  return { dryRun: dryRun.includes('All'), ...(policy ? { propagationPolicy: policy } : {}), ...(pre ? { preconditions: pre } : {}) };
}

/** DELETE of one object: 200 with a Success Status, or with the object when finalizers keep it. */
export async function handleDelete(ctx: ServerContext, r: ResourceRequest): Promise<void> {
  const opts = await deleteOptions(r);
  // kube reads (so decodes and converts) the object before deleting it: a broken webhook fails the delete.
  const stored = storedOf(ctx, r);
  if (stored && r.type.custom) await oneToRequestVersion(ctx, r.type, stored);
  const result = ctx.store.delete(r.type, r.namespace, r.info.pathName ?? '', opts);
  if (result.kind === 'pending') return sendStored(ctx, r, 200, result.object);
  // Kinds whose REST storage returns the deleted object (`ReturnDeletedObject`): custom resources do not.
  sendJson(r.res, 200, result.status);
}

/** DELETE of a collection: deletes every matching object and returns them as a list. */
export async function handleDeleteCollection(ctx: ServerContext, r: ResourceRequest): Promise<void> {
  const opts = await deleteOptions(r);
  const predicate = requestPredicate(r);
  const gr = groupResourceKey(r.type.group, r.type.resource);
  const items: KubeObject[] = [];
  const matching = ctx.storage.list(gr, r.type.namespaced ? r.namespace : undefined).filter((o) => !predicate || predicate(o));
  // Listed (so converted) before anything is deleted: a broken webhook deletes nothing.
  if (r.type.custom) await toRequestVersion(ctx, r.type, matching);
  for (const obj of matching) {
    // Gone while the webhook converted.
    if (!ctx.storage.get(gr, obj.metadata.namespace ?? '', obj.metadata.name ?? '')) continue;
    const result = ctx.store.delete(r.type, obj.metadata.namespace, obj.metadata.name ?? '', opts);
    items.push(result.object);
  }
  const shown = r.type.custom ? await toRequestVersion(ctx, r.type, items) : items;
  sendJson(r.res, 200, { kind: r.type.listKind, apiVersion: apiVersionOf(r.type), metadata: { resourceVersion: String(ctx.storage.resourceVersion) }, items: shown });
}

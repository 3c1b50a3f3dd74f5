/**
 * Reads and writes of a custom resource in a version other than the one it is stored in, in
 * kube-apiserver's order: the stored object is converted to the request's version, the write is
 * decoded, defaulted, admitted and validated there (the registry store, run as a dry run), then
 * converted to the storage version and committed, and the stored result is converted back for the
 * answer. Dry runs convert too (kube's dry-run storage round-trips through the codec).
 */
import { statusErrors } from '../../../src/kube/api-status-error.ts';
import type { KubeObject } from '../../../src/kube/object.ts';
import { fail } from '../errors.ts';
import type { WriteOptions, WriteResult } from '../registry-store.ts';
import { apiVersionOf, groupResourceKey, type ResourceType } from '../resource-type.ts';
import type { ServerContext } from '../server-context.ts';

/** Objects as the request's version shows them (one review for the lot). */
export function toRequestVersion(ctx: ServerContext, type: ResourceType, objects: readonly KubeObject[]): Promise<KubeObject[]> {
  return ctx.converter.convert(type, objects, apiVersionOf(type));
}

/** One object as the request's version shows it. */
export async function oneToRequestVersion(ctx: ServerContext, type: ResourceType, obj: KubeObject): Promise<KubeObject> {
  return (await toRequestVersion(ctx, type, [obj]))[0]!;
}

/** True when a write through `type` (over `stored`, if any) must be converted on its way to storage. */
export function writeNeedsConversion(ctx: ServerContext, type: ResourceType, stored?: KubeObject): boolean {
  if (!type.custom) return false;
  const requested = apiVersionOf(type);
  return ctx.converter.storageApiVersion(type) !== requested || (stored !== undefined && stored.apiVersion !== requested);
}

async function toStorage(ctx: ServerContext, type: ResourceType, obj: KubeObject): Promise<KubeObject> {
  return (await ctx.converter.convert(type, [obj], ctx.converter.storageApiVersion(type)))[0]!;
}

/** POST through conversion (see the file comment). */
export async function convertingCreate(ctx: ServerContext, type: ResourceType, namespace: string | undefined, body: KubeObject, opts: WriteOptions): Promise<WriteResult> {
  const dry = ctx.store.create(type, namespace, body, { ...opts, dryRun: true });
  const stored = await toStorage(ctx, type, dry.object);
  const gr = groupResourceKey(type.group, type.resource);
  let written = stored;
  if (!opts.dryRun) {
    // The world may have moved while the webhook answered: etcd's create-if-absent.
    if (ctx.storage.get(gr, stored.metadata.namespace ?? '', stored.metadata.name ?? '')) fail(statusErrors.alreadyExists({ group: type.group, resource: type.resource }, stored.metadata.name ?? ''));
    written = ctx.storage.create(gr, stored);
  }
  return { ...dry, object: await oneToRequestVersion(ctx, type, written) };
}

/** What a caller already read: the stored object and its conversion to the request's version. */
export interface KnownCurrent {
  readonly stored: KubeObject;
  readonly current: KubeObject;
}

/** Reads the stored object and converts it (404 when missing). */
export async function readCurrent(ctx: ServerContext, type: ResourceType, namespace: string | undefined, name: string): Promise<KnownCurrent> {
  const stored = ctx.store.get(type, namespace, name);
  return { stored, current: await oneToRequestVersion(ctx, type, stored) };
}

/** PUT (and the end of PATCH/apply) through conversion (see the file comment). */
export async function convertingUpdate(
  ctx: ServerContext, type: ResourceType, namespace: string | undefined, name: string, body: KubeObject,
  opts: WriteOptions & { readonly subresource?: string }, known?: KnownCurrent,
): Promise<WriteResult> {
  const { stored: old, current } = known ?? (await readCurrent(ctx, type, namespace, name));
  const dry = ctx.store.update(type, namespace, name, body, { ...opts, dryRun: true, current });
  // kube skips a write whose encoding equals the stored bytes: a no-op update of an object already in the
  // storage version. One stored in an older version is rewritten in the current one (storage migration).
  if (dry.object === current && old.apiVersion === ctx.converter.storageApiVersion(type)) return dry;
  const next = await toStorage(ctx, type, dry.object);
  if (opts.dryRun) return { ...dry, object: await oneToRequestVersion(ctx, type, next) };
  const gr = groupResourceKey(type.group, type.resource);
  const latest = ctx.storage.get(gr, old.metadata.namespace ?? '', name);
  // Optimistic concurrency across the webhook call: etcd's compare-and-swap on the revision read.
  if (!latest || latest.metadata.resourceVersion !== old.metadata.resourceVersion) fail(statusErrors.conflict({ group: type.group, resource: type.resource }, name));
  const deleting = next.metadata.deletionTimestamp && (next.metadata.finalizers ?? []).length === 0;
  const written = deleting ? ctx.storage.remove(gr, next) : ctx.storage.update(gr, next, latest);
  return { ...dry, object: await oneToRequestVersion(ctx, type, written) };
}

/**
 * Reading the CRD, and the last step of a migration: `status.storedVersions` set to the storage version
 * alone, through the `customresourcedefinitions/status` subresource (a read-modify-write guarded by
 * resourceVersion, retried on 409), which lets a later CRD update drop the old versions.
 */
import { isConflict, isNotFound } from '../kube/api-status-error.ts';
import type { KubeObject } from '../kube/object.ts';
import type { ResourceClient, ResourceType } from '../kube/resource-client.ts';
import { isTransientError } from '../kube/kube-client.ts';
import type { Clock } from '../runtime/clock.ts';
import { MigrationRefusedError, readMigrationTarget, type MigrationTarget } from './migration-target.ts';
import { retryDelayMs, type ResolvedRetryPolicy } from './retry-policy.ts';

/** `apiextensions.k8s.io/v1` CustomResourceDefinitions. */
export const CRD_RESOURCE: ResourceType = { group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false };

/** Reads the CRD; a missing one is a {@link MigrationRefusedError}. */
export async function readCrd(crds: ResourceClient<KubeObject>, crdName: string, signal?: AbortSignal): Promise<KubeObject> {
  try {
    return await crds.get({ name: crdName }, signal ? { signal } : {});
  } catch (err) {
    if (isNotFound(err)) throw new MigrationRefusedError(`CRD ${crdName}: not found (customresourcedefinitions.apiextensions.k8s.io "${crdName}"); check --crd`);
    throw err;
  }
}

/** What {@link setStoredVersions} needs. */
export interface StoredVersionsUpdate {
  readonly crds: ResourceClient<KubeObject>;
  /** The target the objects were rewritten for. */
  readonly target: MigrationTarget;
  readonly clock: Clock;
  readonly retry: ResolvedRetryPolicy;
  readonly signal?: AbortSignal;
}

/**
 * Sets `status.storedVersions` to `[target.storageVersion]` and resolves with what the server stored.
 * Re-reads the CRD on every attempt and refuses when its storage version is no longer the one the
 * objects were rewritten in (the CRD changed during the run: objects may now be stored in two versions).
 */
export async function setStoredVersions(update: StoredVersionsUpdate): Promise<readonly string[]> {
  const { crds, target, clock, retry, signal } = update;
  const call = signal ? { signal } : {};
  for (let attempt = 1; ; attempt++) {
    try {
      const crd = await readCrd(crds, target.crdName, signal);
      const now = readMigrationTarget(crd);
      if (now.storageVersion !== target.storageVersion) {
        throw new MigrationRefusedError(`CRD ${target.crdName}: the storage version changed from ${target.storageVersion} to ${now.storageVersion} during the migration; status.storedVersions left as [${now.storedVersions.join(', ')}]: run the migration again`);
      }
      if (now.storedVersions.length === 1 && now.storedVersions[0] === target.storageVersion) return now.storedVersions;
      const status = (crd['status'] as Record<string, unknown> | undefined) ?? {};
      const written = await crds.updateStatus({ ...crd, status: { ...status, storedVersions: [target.storageVersion] } }, call);
      return readMigrationTarget(written).storedVersions;
    } catch (err) {
      if (signal?.aborted) throw signal.reason ?? err;
      const retriable = isConflict(err) || isTransientError(err);
      if (!retriable || attempt >= retry.maxAttempts) {
        if (err instanceof MigrationRefusedError) throw err;
        throw new Error(`CRD ${target.crdName}: updating status.storedVersions to [${target.storageVersion}] failed: ${(err as Error).message}`, { cause: err });
      }
      // A conflict is retried at once with a fresh read; anything else after a backoff.
      if (!isConflict(err)) await clock.sleep(retryDelayMs(err, attempt, retry), signal);
    }
  }
}

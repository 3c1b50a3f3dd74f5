/**
 * What a storage-version migration needs to know about a CustomResourceDefinition, read from the CRD
 * itself (so the migrator works for any custom resource): group, plural, kind, scope, the storage
 * version and `status.storedVersions`, and the decision whether there is anything to migrate.
 */
import { createHash } from 'node:crypto';
import type { KubeObject } from '../kube/object.ts';

/** A CRD that cannot be migrated as it stands (exit code 2): the message names the field and the problem. */
export class MigrationRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MigrationRefusedError';
  }
}

/** The resource a migration rewrites, as its CRD describes it. */
export interface MigrationTarget {
  /** `metadata.name` of the CRD, `<plural>.<group>`. */
  readonly crdName: string;
  readonly group: string;
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
  /** The version with `storage: true`: every object is rewritten in it. */
  readonly storageVersion: string;
  /** `status.storedVersions` as read: the versions objects may still be encoded in. */
  readonly storedVersions: readonly string[];
}

interface CrdVersion {
  readonly name?: unknown;
  readonly served?: unknown;
  readonly storage?: unknown;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * Reads the migration target from a CRD. Throws {@link MigrationRefusedError} when the CRD cannot be
 * migrated: no group, plural or kind, not exactly one storage version, or a storage version that is
 * not served (the migrator reads and writes every object in that version, through the API).
 */
export function readMigrationTarget(crd: KubeObject): MigrationTarget {
  const crdName = crd.metadata.name ?? '';
  const spec = (crd['spec'] ?? {}) as { group?: unknown; scope?: unknown; names?: { plural?: unknown; kind?: unknown }; versions?: unknown };
  const group = text(spec.group);
  const plural = text(spec.names?.plural);
  const kind = text(spec.names?.kind);
  if (!group || !plural || !kind) {
    const missing = [!group && 'spec.group', !plural && 'spec.names.plural', !kind && 'spec.names.kind'].filter(Boolean).join(', ');
    throw new MigrationRefusedError(`CRD ${crdName}: ${missing} missing; is it a CustomResourceDefinition?`);
  }
  const versions = Array.isArray(spec.versions) ? (spec.versions as CrdVersion[]) : [];
  const storage = versions.filter((v) => v.storage === true);
  if (storage.length !== 1) {
    throw new MigrationRefusedError(`CRD ${crdName}: spec.versions has ${storage.length} versions with storage: true, expected exactly one`);
  }
  const storageVersion = text(storage[0]!.name);
  if (!storageVersion) throw new MigrationRefusedError(`CRD ${crdName}: the storage version in spec.versions has no name`);
  if (storage[0]!.served !== true) {
    throw new MigrationRefusedError(`CRD ${crdName}: the storage version ${storageVersion} is not served (spec.versions[].served: false); objects are rewritten through it, so serve it first`);
  }
  const stored = (crd['status'] as { storedVersions?: unknown } | undefined)?.storedVersions;
  const storedVersions = Array.isArray(stored) ? stored.filter((v): v is string => typeof v === 'string') : [];
  return { crdName, group, plural, kind, namespaced: spec.scope !== 'Cluster', storageVersion, storedVersions };
}

/** Whether a run rewrites objects, and why. */
export type MigrationPlan =
  | { readonly action: 'migrate'; readonly reason: string }
  | { readonly action: 'skip'; readonly reason: string };

/**
 * Decides whether to rewrite: nothing to do when `status.storedVersions` is already exactly the
 * storage version (a completed earlier run, or a CRD that never had another), unless `force` asks for
 * a rewrite anyway (e.g. after someone edited storedVersions by hand).
 */
export function planMigration(target: MigrationTarget, force: boolean): MigrationPlan {
  const { storedVersions, storageVersion } = target;
  const alreadyDone = storedVersions.length === 1 && storedVersions[0] === storageVersion;
  if (alreadyDone && !force) return { action: 'skip', reason: `status.storedVersions is already [${storageVersion}]: nothing to migrate (--force rewrites anyway)` };
  const others = storedVersions.filter((v) => v !== storageVersion);
  const reason = alreadyDone
    ? `status.storedVersions is already [${storageVersion}]; rewriting anyway (--force)`
    : others.length > 0
      ? `status.storedVersions is [${storedVersions.join(', ')}]: objects may still be stored in ${others.join(', ')}`
      : `status.storedVersions is [${storedVersions.join(', ')}], not [${storageVersion}]`;
  return { action: 'migrate', reason };
}

/**
 * The `storageVersionHash` discovery reports for a resource stored as `group/version, Kind=kind`
 * (apiserver `discovery.StorageVersionHash`: the first 8 bytes of the SHA-256 of `group/version/kind`,
 * base64). kube-storage-version-migrator watches it to learn when the API server has switched.
 */
export function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash('sha256').update(`${group}/${version}/${kind}`).digest().subarray(0, 8).toString('base64');
}

/**
 * Has the API server switched to the new storage version? A kube-apiserver changes its storage
 * version a moment after the CRD update (its CRD informer), and every apiserver of an HA control plane
 * on its own; until then an unchanged PUT is a no-op that leaves the object in the old version, and a
 * migration that then dropped the old version from `status.storedVersions` would lie. Discovery
 * reports each resource's `storageVersionHash` (what kube-storage-version-migrator's trigger watches):
 * wait until it names the storage version. Servers that do not report it are taken at their word.
 */
import type { Clock } from '../runtime/clock.ts';
import { MigrationRefusedError, storageVersionHash, type MigrationTarget } from './migration-target.ts';

/** The part of an `APIResourceList` this reads. */
export interface DiscoveryResources {
  readonly resources?: readonly { readonly name?: string; readonly storageVersionHash?: string }[];
}

/** Options of {@link awaitStorageVersion}. */
export interface AwaitStorageVersionOptions {
  /** GET `/apis/<group>/<storageVersion>`. */
  readonly readDiscovery: () => Promise<DiscoveryResources>;
  readonly clock: Clock;
  /** Give up after this long. */
  readonly timeoutMs: number;
  /** Between two reads. @default 1_000 */
  readonly pollMs?: number;
  /** Told once, when the first read shows the old hash. */
  readonly onWaiting?: (reported: string, expected: string) => void;
  readonly signal?: AbortSignal;
}

/**
 * Resolves with `true` once discovery reports the storage version's hash, `false` when the server
 * reports none; throws {@link MigrationRefusedError} when it still reports another after `timeoutMs`.
 */
export async function awaitStorageVersion(target: MigrationTarget, options: AwaitStorageVersionOptions): Promise<boolean> {
  const expected = storageVersionHash(target.group, target.storageVersion, target.kind);
  const deadline = options.clock.now() + options.timeoutMs;
  let waiting = false;
  for (;;) {
    const discovery = await options.readDiscovery();
    const resource = discovery.resources?.find((r) => r.name === target.plural);
    if (!resource) throw new MigrationRefusedError(`CRD ${target.crdName}: discovery of ${target.group}/${target.storageVersion} does not list ${target.plural}: is the CRD established?`);
    const reported = resource.storageVersionHash;
    if (reported === undefined || reported === '') return false;
    if (reported === expected) return true;
    if (options.clock.now() >= deadline) {
      throw new MigrationRefusedError(`CRD ${target.crdName}: after ${Math.round(options.timeoutMs / 1000)} s the API server still reports storageVersionHash ${reported} for ${target.plural}, not ${expected} (${target.storageVersion}): it has not switched its storage version, so a rewrite would not migrate anything`);
    }
    if (!waiting) options.onWaiting?.(reported, expected);
    waiting = true;
    await options.clock.sleep(options.pollMs ?? 1_000, options.signal);
  }
}

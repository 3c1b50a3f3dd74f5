/**
 * client-go's `resourcelock/leaselock.go`: the leader election record kept in the spec of a
 * `coordination.k8s.io/v1` Lease.
 *
 * Unlike client-go, this lock never creates the Lease: the synth ships it with an empty spec (so
 * GitOps tools never fight the renewals) and RBAC grants only get + update on that one name.
 */
import { isNotFound } from '../kube/api-status-error.ts';
import type { ObjectMeta } from '../kube/object.ts';

/** The leader election state (client-go `LeaderElectionRecord`), as stored in a Lease's spec. */
export interface LeaderElectionRecord {
  /** Identity of the holder; `''` when nobody holds it (released). */
  holderIdentity: string;
  /** How long others must wait after seeing a change before they may take the lease. */
  leaseDurationSeconds: number;
  /** When the current holder acquired it, RFC 3339 with microseconds. */
  acquireTime: string;
  /** When the holder last renewed it, RFC 3339 with microseconds. */
  renewTime: string;
  /** How many times the lease changed hands. */
  leaseTransitions: number;
}

/** The JSON of a `coordination.k8s.io/v1` Lease, as far as the lock reads it. */
export interface LeaseObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
    [field: string]: unknown;
  };
  [field: string]: unknown;
}

/** The two calls the lock makes; the project's REST client for leases satisfies it. */
export interface LeaseClient {
  /** GET the Lease; rejects with an `ApiStatusError` (404 when it does not exist). */
  get(namespace: string, name: string): Promise<LeaseObject>;
  /** PUT the Lease, guarded by its `metadata.resourceVersion` (409 Conflict when stale). */
  update(lease: LeaseObject): Promise<LeaseObject>;
}

/** Where the leader election record lives (client-go `resourcelock.Interface`). */
export interface LeaseLock {
  /** Reads the record; `record` is `undefined` while the Lease's spec is still empty. */
  get(): Promise<{ record: LeaderElectionRecord | undefined; resourceVersion: string }>;
  /** Writes the record if the Lease is still at `resourceVersion`; resolves with the new resourceVersion. */
  update(record: LeaderElectionRecord, resourceVersion: string): Promise<string>;
  /** `namespace/name`, for logs. */
  describe(): string;
}

/** The Lease the lock needs does not exist; the controller will not create it. */
export class LeaseNotFoundError extends Error {
  constructor(namespace: string, name: string, options?: ErrorOptions) {
    super(
      `Lease ${namespace}/${name} not found: the controller never creates it (its RBAC grants only get and update); ` +
        'apply the Lease shipped with the manifests',
      options,
    );
    this.name = 'LeaseNotFoundError';
  }
}

/** Options of {@link createLeaseLock}. */
export interface LeaseLockOptions {
  /** Namespace of the Lease. */
  readonly namespace: string;
  /** Name of the Lease. */
  readonly name: string;
  /** The client that reads and writes it. It must not pass the write gate: releasing happens with the gate closed. */
  readonly client: LeaseClient;
}

function toRecord(spec: LeaseObject['spec']): LeaderElectionRecord | undefined {
  if (!spec || (spec.holderIdentity === undefined && spec.renewTime === undefined && spec.acquireTime === undefined)) return undefined;
  return {
    holderIdentity: spec.holderIdentity ?? '',
    leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
    acquireTime: spec.acquireTime ?? '',
    renewTime: spec.renewTime ?? '',
    leaseTransitions: spec.leaseTransitions ?? 0,
  };
}

/** Creates a {@link LeaseLock} on an existing Lease. */
export function createLeaseLock(options: LeaseLockOptions): LeaseLock {
  const { namespace, name, client } = options;
  if (!namespace) throw new TypeError('createLeaseLock: namespace must be a non-empty string');
  if (!name) throw new TypeError('createLeaseLock: name must be a non-empty string');
  let last: LeaseObject | undefined;

  const lock: LeaseLock = {
    async get() {
      let lease: LeaseObject;
      try {
        lease = await client.get(namespace, name);
      } catch (err) {
        if (isNotFound(err)) throw new LeaseNotFoundError(namespace, name, { cause: err });
        throw err;
      }
      last = lease;
      return { record: toRecord(lease.spec), resourceVersion: lease.metadata.resourceVersion ?? '' };
    },
    async update(record, resourceVersion) {
      // The PUT carries the whole object: start from the last one read so labels and annotations survive.
      const base: LeaseObject = last ?? { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace } };
      const lease: LeaseObject = {
        ...base,
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { ...base.metadata, name, namespace, resourceVersion },
        spec: {
          ...base.spec,
          holderIdentity: record.holderIdentity,
          leaseDurationSeconds: record.leaseDurationSeconds,
          acquireTime: record.acquireTime,
          renewTime: record.renewTime,
          leaseTransitions: record.leaseTransitions,
        },
      };
      let updated: LeaseObject;
      try {
        updated = await client.update(lease);
      } catch (err) {
        if (isNotFound(err)) throw new LeaseNotFoundError(namespace, name, { cause: err });
        throw err;
      }
      last = updated;
      return updated.metadata.resourceVersion ?? '';
    },
    describe: () => `${namespace}/${name}`,
  };
  return lock;
}

/** Formats epoch milliseconds as a Kubernetes `MicroTime`: `2026-01-01T00:00:00.000000Z`. */
export function formatMicroTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

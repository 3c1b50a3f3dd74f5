import { describe, expect, it } from 'vitest';
import { ApiStatusError, isConflict, statusErrors } from '../../src/kube/api-status-error.ts';
import { createLeaseLock, formatMicroTime, LeaseNotFoundError, type LeaseClient, type LeaseObject } from '../../src/runtime/lease-lock.ts';

const leases = { group: 'coordination.k8s.io', resource: 'leases' };

/** A client that serves one stored Lease and checks resourceVersions like the API server. */
function storeClient(initial: LeaseObject | undefined) {
  let stored = initial && structuredClone(initial);
  const calls: string[] = [];
  const client: LeaseClient = {
    async get(namespace, name) {
      calls.push(`get ${namespace}/${name}`);
      if (!stored) throw new ApiStatusError(statusErrors.notFound(leases, name));
      return structuredClone(stored);
    },
    async update(lease) {
      calls.push(`update ${lease.metadata.namespace}/${lease.metadata.name}@${lease.metadata.resourceVersion}`);
      if (!stored) throw new ApiStatusError(statusErrors.notFound(leases, lease.metadata.name ?? ''));
      if (lease.metadata.resourceVersion !== stored.metadata.resourceVersion) throw new ApiStatusError(statusErrors.conflict(leases, lease.metadata.name ?? ''));
      stored = structuredClone({ ...lease, metadata: { ...lease.metadata, resourceVersion: String(Number(stored.metadata.resourceVersion) + 1) } });
      return structuredClone(stored);
    },
  };
  return { client, calls, stored: () => stored };
}

const emptyLease = (): LeaseObject => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name: 'op-leader', namespace: 'ops', resourceVersion: '7', labels: { app: 'op' } },
  spec: {},
});

const record = {
  holderIdentity: 'pod-1',
  leaseDurationSeconds: 15,
  acquireTime: '2026-01-01T00:00:00.000000Z',
  renewTime: '2026-01-01T00:00:02.500000Z',
  leaseTransitions: 2,
};

describe('createLeaseLock', () => {
  it('reads an empty spec as no record, with the resourceVersion to write against', async () => {
    const { client } = storeClient(emptyLease());
    const lock = createLeaseLock({ namespace: 'ops', name: 'op-leader', client });
    await expect(lock.get()).resolves.toEqual({ record: undefined, resourceVersion: '7' });
    expect(lock.describe()).toBe('ops/op-leader');
  });

  it('writes the record into the spec with a guarded PUT, keeping labels, and reads it back', async () => {
    const { client, calls, stored } = storeClient(emptyLease());
    const lock = createLeaseLock({ namespace: 'ops', name: 'op-leader', client });
    const { resourceVersion } = await lock.get();
    await expect(lock.update(record, resourceVersion)).resolves.toBe('8');
    expect(calls).toEqual(['get ops/op-leader', 'update ops/op-leader@7']);
    expect(stored()).toEqual({ ...emptyLease(), metadata: { ...emptyLease().metadata, resourceVersion: '8' }, spec: record });
    await expect(lock.get()).resolves.toEqual({ record, resourceVersion: '8' });
  });

  it('passes a stale write back as the server conflict', async () => {
    const { client } = storeClient(emptyLease());
    const lock = createLeaseLock({ namespace: 'ops', name: 'op-leader', client });
    await lock.get();
    const err = await lock.update(record, '6').catch((e: unknown) => e);
    expect(isConflict(err)).toBe(true);
  });

  it('never creates a missing Lease: it fails with an error that says so', async () => {
    const { client, calls } = storeClient(undefined);
    const lock = createLeaseLock({ namespace: 'ops', name: 'op-leader', client });
    const err = await lock.get().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LeaseNotFoundError);
    expect((err as Error).message).toBe(
      'Lease ops/op-leader not found: the controller never creates it (its RBAC grants only get and update); apply the Lease shipped with the manifests',
    );
    expect(calls).toEqual(['get ops/op-leader']);
  });

  it.each([
    [{ namespace: '', name: 'x' }, /namespace/],
    [{ namespace: 'ops', name: '' }, /name/],
  ])('rejects %o naming the field', (where, message) => {
    expect(() => createLeaseLock({ ...where, client: storeClient(undefined).client })).toThrow(message);
  });
});

describe('formatMicroTime', () => {
  it.each([
    [Date.UTC(2026, 0, 1), '2026-01-01T00:00:00.000000Z'],
    [Date.UTC(2026, 5, 30, 23, 59, 59, 123), '2026-06-30T23:59:59.123000Z'],
  ])('formats %i as a Kubernetes MicroTime', (ms, expected) => {
    expect(formatMicroTime(ms)).toBe(expected);
  });
});

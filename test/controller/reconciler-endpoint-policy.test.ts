/** The reconciler and the operator's object store endpoint allow-list (`--allowed-backup-endpoints`). */
import { describe, expect, it } from 'vitest';
import { asStored, schedule } from './fixtures.ts';
import { desiredOf, harness, KEY, type CronJob } from './reconciler-harness.ts';

const toBucket = (endpoint?: string) =>
  schedule({
    spec: {
      destination: { type: 'ObjectStore', objectStore: { bucket: 'acme-backups', credentialsSecretName: 's3', ...(endpoint === undefined ? {} : { endpoint }) } },
    },
  });

describe('spec.destination.objectStore.endpoint and the operator\'s allow-list', () => {
  it('refuses an endpoint outside the allow-list (empty: AWS only): Ready=False/EndpointNotAllowed naming the field and the flag, no child', async () => {
    const h = harness({ schedule: toBucket('https://169.254.169.254') }, {});
    await h.reconciler.reconcile(KEY);
    expect(h.childWrites()).toBe(0);
    expect(h.ready()).toMatchObject({ status: 'False', reason: 'EndpointNotAllowed' });
    expect(h.ready()?.message).toContain('spec.destination.objectStore.endpoint: "https://169.254.169.254" is not allowed');
    expect(h.ready()?.message).toContain('--allowed-backup-endpoints');
    expect(h.events).toEqual([expect.objectContaining({ type: 'Warning', reason: 'EndpointNotAllowed' })]);
  });

  it.each([
    ['AWS S3 (no endpoint), whatever the list', undefined, []],
    ['an allowed endpoint, spelt differently (case, default port)', 'https://MinIO.storage:443', ['https://minio.storage']],
    ['an endpoint matching a pattern', 'https://rgw-2.ceph.internal:8443', ['https://*.ceph.internal:*']],
  ])('creates the child for %s', async (_name, endpoint, allowedEndpoints) => {
    const h = harness({ schedule: toBucket(endpoint) }, { create: (obj) => asStored(obj) }, { allowedEndpoints });
    await h.reconciler.reconcile(KEY);
    const created = h.calls[0]?.obj as CronJob;
    expect(created.spec.jobTemplate.spec.template.spec.containers[0].args).toContain('--destination-url=s3://acme-backups');
    expect(h.events.map((e) => e.reason)).not.toContain('EndpointNotAllowed');
  });

  it('suspends a running child whose endpoint the operator no longer allows, with a Warning Event', async () => {
    const allowed = toBucket('https://minio.storage:9000');
    const child = asStored(desiredOf(allowed), '300') as CronJob;
    const h = harness({ schedule: allowed, child }, { update: (obj) => obj }, { allowedEndpoints: [] });
    await expect(h.reconciler.reconcileWithMove(KEY)).resolves.toEqual({ move: 'patchCronJob', result: {} });
    expect((h.calls[0]?.obj as CronJob).spec.suspend).toBe(true);
    expect(h.events).toEqual([expect.objectContaining({ type: 'Warning', reason: 'Suspended', message: expect.stringContaining('an endpoint --allowed-backup-endpoints does not allow') })]);
  });
});

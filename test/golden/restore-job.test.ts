/**
 * Golden Jobs of buildRestoreJob: each input (a Restore, and the source the controller resolved when
 * spec.from names a BackupSchedule) gives the committed Job, which is valid against the Kubernetes
 * OpenAPI schema; the Job's arguments, handed to the runner's own parser, give the restore the spec
 * asks for (a flag renamed on either side fails this).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { Restore } from '../../imports/restore.ts';
import { parseRestoreArgs } from '../../src/backup/restore/restore-args.ts';
import { buildRestoreJob, restoreJobName, type ResolvedSource } from '../../src/pure/restore-job.ts';

const INPUTS = new URL('./restore/inputs/', import.meta.url).pathname;
const cases = readdirSync(INPUTS)
  .filter((f) => f.endsWith('.yaml'))
  .sort()
  .map((file) => [file, parse(readFileSync(INPUTS + file, 'utf8')) as { restore: Restore; resolved?: ResolvedSource }] as const);

describe('golden Jobs of buildRestoreJob', () => {
  it.each(cases)('%s builds the expected Job', async (file, { restore, resolved }) => {
    await expect(stringify(buildRestoreJob(restore, resolved))).toMatchFileSnapshot(`./restore/expected/${file}`);
  });

  it.each(cases)('%s builds a Job valid against the Kubernetes OpenAPI schema, restricted and owned', (_file, { restore, resolved }) => {
    const job = buildRestoreJob(restore, resolved);
    expect(() => new Job(job).validate()).not.toThrow();
    expect(job.metadata?.name?.length).toBeLessThanOrEqual(63);
    expect(job.metadata?.name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    for (const value of Object.values(job.metadata?.labels ?? {})) expect(value.length).toBeLessThanOrEqual(63);
    expect(job.metadata?.ownerReferences).toEqual([{ apiVersion: 'kubelings.dev/v1', kind: 'Restore', name: restore.metadata?.name, uid: restore.metadata?.uid, controller: true, blockOwnerDeletion: true }]);
    const pod = job.spec!.template.spec!;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod.containers[0]!.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } });
    expect(pod.automountServiceAccountToken).toBe(false);
    // Credentials only as secretKeyRef; no value of the Secret ever in the Job.
    for (const env of pod.containers[0]!.env ?? []) if (env.name.startsWith('AWS_')) expect(env.valueFrom?.secretKeyRef?.name).toBe(restore.spec.from.objectStore?.credentialsSecretName);
  });

  it.each(cases)('%s: the runner parses the arguments into the restore the spec asks for', (_file, { restore }) => {
    const args = buildRestoreJob(restore, cases.find(([, c]) => c.restore === restore)?.[1].resolved).spec!.template.spec!.containers[0]!.args!;
    expect(args.slice(0, 2)).toEqual(['backup', 'restore']);
    const parsed = parseRestoreArgs(args.slice(2));
    const store = restore.spec.from.objectStore;
    if (store !== undefined) {
      expect(parsed.from).toBe(`s3://${store.bucket}${store.prefix === undefined ? '' : `/${store.prefix}`}`);
      expect(parsed.objectStore?.s3).toMatchObject({ ...(store.endpoint ? { endpoint: store.endpoint } : {}), ...(store.region ? { region: store.region } : {}), forcePathStyle: store.forcePathStyle === true });
      expect(parsed.objectStore?.identityFile).toBe(restore.spec.decryption === undefined ? undefined : '/etc/backup/age-identity/identity');
    }
    expect(parsed).toMatchObject({
      backup: restore.spec.backup,
      schedule: restore.spec.from.backupScheduleName,
      overwrite: restore.spec.target.overwrite === true,
      allowIncomplete: restore.spec.allowIncomplete === true,
      targetDir: `/backup/target${restore.spec.target.persistentVolumeClaim.path === undefined ? '' : `/${restore.spec.target.persistentVolumeClaim.path}`}`,
    });
  });

  it('refuses an invalid Restore, a missing resolution and a needless one, naming the problem', () => {
    const [, { restore, resolved }] = cases[0]!;
    expect(() => buildRestoreJob(restore)).toThrow(/spec\.from\.backupScheduleName nightly needs its destination resolved/);
    const [, explicit] = cases[1]!;
    expect(() => buildRestoreJob(explicit.restore, { persistentVolumeClaim: { claimName: 'x' } })).toThrow(/only for spec\.from\.backupScheduleName/);
    expect(() => buildRestoreJob({ ...restore, spec: { ...restore.spec, backup: '../x' } }, resolved)).toThrow(/spec\.backup: must be latest or a backup's file or object name/);
    expect(() => buildRestoreJob({ ...restore, metadata: { name: 'x', namespace: 'y' } }, resolved)).toThrow(/metadata\.uid is required/);
  });

  it('names Jobs as DNS-1123 labels that never collide for a.b and a-b', () => {
    expect(restoreJobName('db')).toBe('restore-db');
    expect(restoreJobName('a.b')).not.toBe(restoreJobName('a-b'));
    expect(restoreJobName('x'.repeat(253)).length).toBe(63);
  });
});

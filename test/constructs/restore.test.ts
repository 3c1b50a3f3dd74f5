/**
 * The Restore construct: synthesizes a kubelings.dev/v1 Restore in the chart's namespace, fails the
 * synth on an invalid spec naming the field (a JSON patch added later too), and previews the Job the
 * controller builds (the same as buildRestoreJob's, the uid a placeholder).
 */
import { Chart, JsonPatch, Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { buildRestoreJob } from '../../src/pure/restore-job.ts';
import { PREVIEW_UID, Restore, type RestoreSpec } from '../../src/constructs/index.ts';

const spec: RestoreSpec = { from: { backupScheduleName: 'nightly' }, backup: 'latest', target: { persistentVolumeClaim: { claimName: 'db-data', path: 'restored' } } };
const chart = (): Chart => new Chart(Testing.app(), 'team-a', { namespace: 'team-a', disableResourceNameHashes: true });

describe('Restore construct', () => {
  it('synthesizes a kubelings.dev/v1 Restore in the chart namespace', () => {
    const c = chart();
    new Restore(c, 'db-restore', { spec });
    expect(Testing.synth(c)).toEqual([{ apiVersion: 'kubelings.dev/v1', kind: 'Restore', metadata: { name: 'team-a-db-restore', namespace: 'team-a' }, spec }]);
  });

  it('fails the synth with the field and the problem, also for a later JSON patch', () => {
    const c = chart();
    new Restore(c, 'two-sources', { spec: { ...spec, from: { backupScheduleName: 'a', persistentVolumeClaim: { claimName: 'b' } } } });
    expect(() => Testing.synth(c)).toThrow(/spec\.from: exactly one of backupScheduleName, persistentVolumeClaim, objectStore must be set/);
    const d = chart();
    new Restore(d, 'patched', { spec }).addJsonPatch(JsonPatch.add('/spec/target/persistentVolumeClaim/path', 'a/../..'));
    expect(() => Testing.synth(d)).toThrow(/spec\.target\.persistentVolumeClaim\.path: path must not contain "\.\." segments/);
  });

  it('previews the controller\'s Job', () => {
    const c = chart();
    const restore = new Restore(c, 'db-restore', { metadata: { name: 'db-restore' }, spec });
    const resolved = { persistentVolumeClaim: { claimName: 'backups' } };
    const job = restore.toJob(resolved, { image: 'registry.example.com/runner:1' });
    expect(job).toEqual(buildRestoreJob({ ...restore.toRestore(), metadata: { name: 'db-restore', namespace: 'team-a', uid: PREVIEW_UID } }, resolved, { image: 'registry.example.com/runner:1' }));
    expect(job.spec?.template.spec?.containers[0]?.args).toContain('--target-dir=/backup/target/restored');
    expect(() => restore.toJob()).toThrow(/needs its destination resolved/);
  });
});

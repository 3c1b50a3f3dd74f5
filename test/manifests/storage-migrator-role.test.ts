import { Testing } from 'cdk8s';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { describe, expect, it } from 'vitest';
import { StorageMigratorRole } from '../../src/manifests/storage-migrator-role.ts';

describe('StorageMigratorRole', () => {
  it('synthesizes a valid ClusterRole that reads and rewrites BackupSchedules and writes only the status of their CRD', () => {
    const chart = Testing.chart();
    new StorageMigratorRole(chart, 'Migrator', { labels: { 'app.kubernetes.io/part-of': 'backupschedule-operator' } });
    const objects = Testing.synth(chart) as Record<string, any>[];
    expect(objects).toHaveLength(1);
    const role = objects[0]!;
    expect(() => new ClusterRole(role as never).validate()).not.toThrow();
    expect(role['metadata']).toEqual({ name: 'backupschedule-storage-migrator', labels: { 'app.kubernetes.io/part-of': 'backupschedule-operator' }, annotations: { 'argocd.argoproj.io/sync-wave': '0' } });
    expect(role['rules']).toEqual([
      { apiGroups: ['kubelings.dev'], resources: ['backupschedules'], verbs: ['get', 'list', 'update'] },
      { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], resourceNames: ['backupschedules.kubelings.dev'], verbs: ['get'] },
      { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions/status'], resourceNames: ['backupschedules.kubelings.dev'], verbs: ['update'] },
    ]);
  });

  it('takes a name', () => {
    const chart = Testing.chart();
    new StorageMigratorRole(chart, 'Migrator', { name: 'migrator' });
    expect((Testing.synth(chart) as Record<string, any>[])[0]!['metadata'].name).toBe('migrator');
  });
});

import { Testing } from 'cdk8s';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { describe, expect, it } from 'vitest';
import { UserClusterRoles } from '../../src/manifests/index.ts';

describe('UserClusterRoles', () => {
  const chart = Testing.chart();
  new UserClusterRoles(chart, 'UserRoles', { labels: { 'app.kubernetes.io/part-of': 'backupschedule-operator' } });
  const objects = Testing.synth(chart) as Record<string, any>[];
  const byName = (name: string) => objects.find((o) => o['metadata'].name === name) as Record<string, any>;

  it('matches the snapshot', () => {
    expect(objects).toMatchSnapshot();
  });

  it('synthesizes valid ClusterRoles named <prefix>-viewer and <prefix>-editor', () => {
    expect(objects.map((o) => `${o['kind']}/${o['metadata'].name}`)).toEqual(['ClusterRole/backupschedule-viewer', 'ClusterRole/backupschedule-editor']);
    for (const o of objects) expect(() => new ClusterRole(o as never).validate()).not.toThrow();
  });

  it('aggregates the viewer into view, the editor into edit and admin', () => {
    expect(byName('backupschedule-viewer')['metadata'].labels).toEqual({ 'app.kubernetes.io/part-of': 'backupschedule-operator', 'rbac.authorization.k8s.io/aggregate-to-view': 'true' });
    expect(byName('backupschedule-editor')['metadata'].labels).toEqual({
      'app.kubernetes.io/part-of': 'backupschedule-operator',
      'rbac.authorization.k8s.io/aggregate-to-edit': 'true',
      'rbac.authorization.k8s.io/aggregate-to-admin': 'true',
    });
  });

  it('lets viewers only read, and editors write BackupSchedules and Restores but never their status', () => {
    const verbs = (name: string) => byName(name)['rules'].map((r: any) => `${r.resources.join('+')}: ${r.verbs.join(',')}`);
    expect(verbs('backupschedule-viewer')).toEqual(['backupschedules+restores+backupschedules/status+restores/status: get,list,watch']);
    expect(verbs('backupschedule-editor')).toEqual([
      'backupschedules+restores: create,delete,deletecollection,get,list,patch,update,watch',
      'backupschedules/status+restores/status: get,list,watch',
    ]);
    expect(objects.every((o) => o['rules'].every((r: any) => r.apiGroups.join() === 'kubelings.dev'))).toBe(true);
  });

  it('takes a name prefix', () => {
    const c = Testing.chart();
    new UserClusterRoles(c, 'R', { namePrefix: 'bks' });
    expect((Testing.synth(c) as Record<string, any>[]).map((o) => o['metadata'].name)).toEqual(['bks-viewer', 'bks-editor']);
  });
});

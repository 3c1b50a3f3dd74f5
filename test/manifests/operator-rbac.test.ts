import { Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { OperatorRbac } from '../../src/manifests/index.ts';

describe('OperatorRbac', () => {
  const chart = Testing.chart();
  new OperatorRbac(chart, 'Rbac', { name: 'op', namespace: 'op-system', leaseName: 'op-leader' });
  const objects = Testing.synth(chart) as Record<string, any>[];
  const byKind = (kind: string) => objects.find((o) => o['kind'] === kind) as Record<string, any>;

  it('matches the snapshot', () => {
    expect(objects).toMatchSnapshot();
  });

  it('grants exactly the verbs the controller uses (docs/design.md, "RBAC")', () => {
    const rules = byKind('ClusterRole')['rules'].map((r: any) => `${r.apiGroups[0]}/${r.resources[0]}: ${r.verbs.join(',')}`);
    expect(rules).toEqual([
      'kubelings.dev/backupschedules: get,list,watch',
      'kubelings.dev/backupschedules/status: update',
      'kubelings.dev/backupschedules/finalizers: update',
      'kubelings.dev/restores: get,list,watch',
      'kubelings.dev/restores/status: update',
      'kubelings.dev/restores/finalizers: update',
      'batch/cronjobs: get,list,watch,create,patch',
      'batch/jobs: get,list,watch,create',
      '/pods: list',
      '/events: create,patch',
    ]);
  });

  it('limits the Lease Role to the one Lease, get and update, no create', () => {
    expect(byKind('Role')['metadata'].namespace).toBe('op-system');
    expect(byKind('Role')['rules']).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: ['op-leader'], verbs: ['get', 'update'] },
    ]);
  });

  it('binds both roles to the ServiceAccount', () => {
    const subject = { kind: 'ServiceAccount', name: 'op', namespace: 'op-system' };
    expect(byKind('ClusterRoleBinding')['subjects']).toEqual([subject]);
    expect(byKind('RoleBinding')['subjects']).toEqual([subject]);
    expect(byKind('RoleBinding')['roleRef']).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'op-leader-election' });
  });
});

describe('OperatorRbac: the conversion webhook certificate rights', () => {
  const synthRbac = (webhookSecretName?: string): Record<string, any>[] => {
    const chart = Testing.chart();
    new OperatorRbac(chart, 'Rbac', { name: 'op', namespace: 'op-system', leaseName: 'op-leader', ...(webhookSecretName ? { webhookSecretName } : {}) });
    return Testing.synth(chart) as Record<string, any>[];
  };
  const resourcesOf = (objects: Record<string, any>[]): string[] =>
    objects.filter((o) => o['kind'] === 'ClusterRole' || o['kind'] === 'Role').flatMap((o) => o['rules'].flatMap((r: any) => r.resources));

  it('with a webhook Secret kept by the controller: a Role for that one Secret (get, update) and get, patch on the one CRD', () => {
    const objects = synthRbac('op-webhook-tls');
    const secretRole = objects.find((o) => o['kind'] === 'Role' && o['metadata'].name === 'op-webhook-certificate') as Record<string, any>;
    expect(secretRole['rules']).toEqual([{ apiGroups: [''], resources: ['secrets'], resourceNames: ['op-webhook-tls'], verbs: ['get', 'update'] }]);
    expect(objects.find((o) => o['kind'] === 'ClusterRole')?.['rules'].at(-1)).toEqual({ apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], resourceNames: ['backupschedules.kubelings.dev'], verbs: ['get', 'patch'] });
  });

  it('without (cert-manager keeps the certificate and injects the CA): no right on any Secret nor on the CRD', () => {
    const objects = synthRbac();
    expect(objects.map((o) => o['kind'])).toEqual(['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);
    expect(resourcesOf(objects)).not.toContain('secrets');
    expect(resourcesOf(objects)).not.toContain('customresourcedefinitions');
    expect(resourcesOf(synthRbac('op-webhook-tls'))).toEqual(expect.arrayContaining(['secrets', 'customresourcedefinitions']));
  });
});

describe('OperatorRbac with watched namespaces', () => {
  const chart = Testing.chart();
  new OperatorRbac(chart, 'Rbac', { name: 'op', namespace: 'op-system', leaseName: 'op-leader', webhookSecretName: 'op-tls', watchedNamespaces: ['team-a', 'team-b'] });
  const objects = Testing.synth(chart) as Record<string, any>[];
  const named = (kind: string) => objects.filter((o) => o['kind'] === kind).map((o) => `${o['metadata'].namespace ?? ''}/${o['metadata'].name}`);

  it('grants the controller\'s rules in each watched namespace only: RoleBindings of the ClusterRole, no ClusterRoleBinding of it', () => {
    expect(named('RoleBinding')).toEqual(['team-a/op', 'team-b/op', 'op-system/op-leader-election', 'op-system/op-webhook-certificate']);
    for (const binding of objects.filter((o) => o['kind'] === 'RoleBinding' && o['metadata'].name === 'op')) {
      expect(binding['roleRef']).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'op' });
    }
    expect(objects.find((o) => o['kind'] === 'ClusterRole' && o['metadata'].name === 'op')?.['rules']).not.toContainEqual(expect.objectContaining({ resources: ['customresourcedefinitions'] }));
  });

  it('keeps the one cluster-scoped rule, the CRD caBundle, in a ClusterRole of its own bound cluster-wide', () => {
    expect(named('ClusterRoleBinding')).toEqual(['/op-crd-ca-bundle']);
    expect(objects.find((o) => o['kind'] === 'ClusterRole' && o['metadata'].name === 'op-crd-ca-bundle')?.['rules']).toEqual([
      { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], resourceNames: ['backupschedules.kubelings.dev'], verbs: ['get', 'patch'] },
    ]);
  });
});

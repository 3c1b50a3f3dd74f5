import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/kube/object.ts';
import { MigrationRefusedError, planMigration, readMigrationTarget, storageVersionHash, type MigrationTarget } from '../../src/migration/index.ts';
import { twoVersionCrd } from './two-version-crd.ts';

const withStatus = (crd: KubeObject, storedVersions: string[]): KubeObject => ({ ...crd, status: { storedVersions } });

describe('readMigrationTarget', () => {
  it('reads group, plural, kind, scope, the storage version and storedVersions from the CRD', () => {
    expect(readMigrationTarget(withStatus(twoVersionCrd('example.com', 'v1'), ['v1alpha1', 'v1']))).toEqual({
      crdName: 'gadgets.example.com', group: 'example.com', plural: 'gadgets', kind: 'Gadget', namespaced: true, storageVersion: 'v1', storedVersions: ['v1alpha1', 'v1'],
    });
    const cluster = twoVersionCrd('example.com', 'v1');
    (cluster['spec'] as Record<string, unknown>)['scope'] = 'Cluster';
    expect(readMigrationTarget(cluster)).toMatchObject({ namespaced: false, storedVersions: [] });
  });

  const edit = (change: (spec: Record<string, any>) => void): KubeObject => {
    const crd = twoVersionCrd('example.com', 'v1');
    change(crd['spec'] as Record<string, any>);
    return crd;
  };
  it.each<[string, KubeObject, string]>([
    ['no group', edit((s) => delete s['group']), 'CRD gadgets.example.com: spec.group missing; is it a CustomResourceDefinition?'],
    ['no plural nor kind', edit((s) => (s['names'] = {})), 'CRD gadgets.example.com: spec.names.plural, spec.names.kind missing; is it a CustomResourceDefinition?'],
    ['no storage version', edit((s) => s['versions'].forEach((v: Record<string, unknown>) => (v['storage'] = false))), 'CRD gadgets.example.com: spec.versions has 0 versions with storage: true, expected exactly one'],
    ['two storage versions', edit((s) => s['versions'].forEach((v: Record<string, unknown>) => (v['storage'] = true))), 'CRD gadgets.example.com: spec.versions has 2 versions with storage: true, expected exactly one'],
    ['a storage version not served', twoVersionCrd('example.com', 'v1', false), 'CRD gadgets.example.com: the storage version v1 is not served (spec.versions[].served: false); objects are rewritten through it, so serve it first'],
  ])('refuses a CRD with %s, naming the field', (_, crd, message) => {
    expect(() => readMigrationTarget(crd)).toThrow(new MigrationRefusedError(message));
  });
});

describe('planMigration', () => {
  const target = (storedVersions: string[]): MigrationTarget => ({ crdName: 'gadgets.example.com', group: 'example.com', plural: 'gadgets', kind: 'Gadget', namespaced: true, storageVersion: 'v1', storedVersions });
  it.each<[string[], boolean, 'migrate' | 'skip', string]>([
    [['v1alpha1', 'v1'], false, 'migrate', 'status.storedVersions is [v1alpha1, v1]: objects may still be stored in v1alpha1'],
    [['v1alpha1'], false, 'migrate', 'status.storedVersions is [v1alpha1]: objects may still be stored in v1alpha1'],
    [[], false, 'migrate', 'status.storedVersions is [], not [v1]'],
    [['v1'], false, 'skip', 'status.storedVersions is already [v1]: nothing to migrate (--force rewrites anyway)'],
    [['v1'], true, 'migrate', 'status.storedVersions is already [v1]; rewriting anyway (--force)'],
  ])('storedVersions %j, force %s: %s', (storedVersions, force, action, reason) => {
    expect(planMigration(target(storedVersions), force)).toEqual({ action, reason });
  });
});

describe('storageVersionHash', () => {
  it('matches what kube-apiserver 1.32 reports in discovery for a CRD (test/fixtures/k8s-reference)', () => {
    expect(storageVersionHash('fixtures.example.com', 'v1', 'Widget')).toBe('gAnRodyvmFE=');
  });
});

import { describe, expect, it } from 'vitest';
import { loadStatus } from '../../fixtures/k8s-reference.ts';
import { forbiddenStatus } from './forbidden.ts';
import type { AuthorizationAttributes } from './types.ts';

const developer = { name: 'developer', groups: ['system:authenticated'] };
const attrs = (over: Partial<AuthorizationAttributes>): AuthorizationAttributes => ({
  user: developer,
  verb: 'get',
  apiGroup: '',
  resource: '',
  path: '/',
  isResourceRequest: true,
  ...over,
});

describe('forbiddenStatus', () => {
  it.each<[string, Partial<AuthorizationAttributes>]>([
    ['error-403-forbidden-create.json', { verb: 'create', apiGroup: 'batch', resource: 'cronjobs', namespace: 'kubelings' }],
    ['error-403-forbidden-list.json', { verb: 'list', apiGroup: '', resource: 'configmaps', namespace: 'kubelings' }],
    ['error-403-resourcename-create.json', { verb: 'create', apiGroup: 'coordination.k8s.io', resource: 'leases', namespace: 'kubelings' }],
    ['error-403-resourcename-list.json', { verb: 'list', apiGroup: 'coordination.k8s.io', resource: 'leases', namespace: 'kubelings' }],
  ])('matches %s', (file, over) => {
    expect(forbiddenStatus(attrs(over))).toEqual(loadStatus(file));
  });

  it('names the object, the subresource and the cluster scope like kube', () => {
    const status = forbiddenStatus(attrs({ verb: 'update', apiGroup: 'kubelings.dev', resource: 'backupschedules', subresource: 'status', name: 'nightly', namespace: undefined }));
    expect(status.message).toBe('backupschedules.kubelings.dev "nightly" is forbidden: User "developer" cannot update resource "backupschedules/status" in API group "kubelings.dev" at the cluster scope');
    expect(status.details).toEqual({ name: 'nightly', group: 'kubelings.dev', kind: 'backupschedules' });
  });

  it('words a non-resource URL denial as kube does', () => {
    expect(forbiddenStatus(attrs({ isResourceRequest: false, path: '/foo' }))).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'forbidden: User "developer" cannot get path "/foo"',
      reason: 'Forbidden',
      details: {},
      code: 403,
    });
  });
});

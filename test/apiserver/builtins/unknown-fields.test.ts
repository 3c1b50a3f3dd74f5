import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/kube/object.ts';
import { loadReference } from '../../fixtures/k8s-reference.ts';
import { pruneBuiltinUnknownFields } from './unknown-fields.ts';

describe('pruneBuiltinUnknownFields', () => {
  it('reports and drops an unknown top-level field of a ConfigMap', () => {
    const cm: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'b' }, bogus: 1 };
    expect(pruneBuiltinUnknownFields('', 'configmaps', cm)).toEqual(['bogus']);
    expect(cm).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'b' } });
  });

  it('finds unknown fields deep in a CronJob pod template and in metadata, with list indexes', () => {
    const cj = {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'n', labels: { a: 'b' }, colour: 'red' },
      spec: { schedule: '@daily', jobTemplate: { spec: { template: { spec: { containers: [{ name: 'c', image: 'i' }, { name: 'd', image: 'i', imagePullPolcy: 'Always' }] } } } } },
    } as unknown as KubeObject;
    expect(pruneBuiltinUnknownFields('batch', 'cronjobs', cj)).toEqual(['metadata.colour', 'spec.jobTemplate.spec.template.spec.containers[1].imagePullPolcy']);
  });

  it.each([
    ['cronjob-v1beta1-created-with-server-defaults.json', 'batch', 'cronjobs'],
    ['lease-acquired.json', 'coordination.k8s.io', 'leases'],
    ['event-core-v1-create.json', '', 'events'],
    ['crd-widget-request.json', 'apiextensions.k8s.io', 'customresourcedefinitions'],
  ])('finds nothing unknown in the recorded %s', (file, group, resource) => {
    const object = loadReference<KubeObject>(file);
    const before = structuredClone(object);
    expect(pruneBuiltinUnknownFields(group, resource, object)).toEqual([]);
    expect(object).toEqual(before);
  });

  it('checks CRD schemas inside items and additionalProperties', () => {
    const crd = {
      metadata: { name: 'x' },
      spec: { versions: [{ name: 'v1', schema: { openAPIV3Schema: { type: 'object', properties: { a: { type: 'array', items: { type: 'string', typo: true } } } } } }] },
    } as unknown as KubeObject;
    expect(pruneBuiltinUnknownFields('apiextensions.k8s.io', 'customresourcedefinitions', crd)).toEqual(['spec.versions[0].schema.openAPIV3Schema.properties.a.items.typo']);
  });

  it('leaves kinds it does not know alone', () => {
    expect(pruneBuiltinUnknownFields('apps', 'deployments', { metadata: {}, whatever: 1 })).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import type { KubeObject, ObjectMeta, StatusCause } from '../../../src/kube/object.ts';
import { loadStatus } from '../../fixtures/k8s-reference.ts';
import { validateObjectName } from './name-validation.ts';
import { validateBuiltin } from './validate.ts';

const labelMsg = (value: string) =>
  `Invalid value: "${value}": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`;

describe('validateObjectName', () => {
  it('reports an invalid subdomain exactly as error-422-invalid-name.json', () => {
    const recorded = loadStatus('error-422-invalid-name.json').details?.causes;
    expect(validateObjectName('configmaps', 'Bad_Name')).toEqual(recorded);
    expect(validateObjectName('widgets', 'Bad_Name')).toEqual(recorded);
  });

  it.each<[string, string, StatusCause[]]>([
    ['configmaps', 'a.b-c', []],
    ['namespaces', 'team-a', []],
    ['namespaces', 'a.b', [{ reason: 'FieldValueInvalid', field: 'metadata.name', message: labelMsg('a.b') }]],
    ['namespaces', 'x'.repeat(64), [
      { reason: 'FieldValueInvalid', field: 'metadata.name', message: `Invalid value: "${'x'.repeat(64)}": must be no more than 63 characters` },
    ]],
    ['configmaps', 'x'.repeat(254), [{ reason: 'FieldValueInvalid', field: 'metadata.name', message: `Invalid value: "${'x'.repeat(254)}": must be no more than 253 characters` }]],
    ['clusterroles', 'system:controller:foo', []],
    ['roles', 'a/b', [{ reason: 'FieldValueInvalid', field: 'metadata.name', message: `Invalid value: "a/b": may not contain '/'` }]],
    ['rolebindings', '..', [{ reason: 'FieldValueInvalid', field: 'metadata.name', message: `Invalid value: "..": may not be '..'` }]],
    ['configmaps', '', [{ reason: 'FieldValueRequired', field: 'metadata.name', message: 'Required value: name or generateName is required' }]],
  ])('checks %s name %j', (resource, name, expected) => {
    expect(validateObjectName(resource, name)).toEqual(expected);
  });
});

describe('validateBuiltin metadata checks', () => {
  const sa = (metadata: ObjectMeta): KubeObject => ({ metadata });

  it('accepts a generateName ending in a dash', () => {
    expect(validateBuiltin('', 'serviceaccounts', sa({ generateName: 'worker-' }))).toEqual([]);
  });

  it.each<[string, ObjectMeta, StatusCause[]]>([
    ['a label value over 63 characters', { name: 'a', labels: { app: 'v'.repeat(64) } }, [
      { reason: 'FieldValueInvalid', field: 'metadata.labels', message: `Invalid value: "${'v'.repeat(64)}": must be no more than 63 characters` },
    ]],
    ['a label value with a space', { name: 'a', labels: { app: 'a b' } }, [
      { reason: 'FieldValueInvalid', field: 'metadata.labels', message: `Invalid value: "a b": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')` },
    ]],
    ['a label key with an empty prefix', { name: 'a', labels: { '/x': 'y' } }, [
      { reason: 'FieldValueInvalid', field: 'metadata.labels', message: 'Invalid value: "/x": prefix part must be non-empty' },
    ]],
    ['a label key with two slashes', { name: 'a', labels: { 'a/b/c': 'y' } }, [
      { reason: 'FieldValueInvalid', field: 'metadata.labels', message: `Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')` },
    ]],
    ['an owner reference without uid and version', { name: 'a', ownerReferences: [{ apiVersion: 'batch/', kind: 'CronJob', name: 'c', uid: '' }] }, [
      { reason: 'FieldValueInvalid', field: 'metadata.ownerReferences.apiVersion', message: 'Invalid value: "batch/": version must not be empty' },
      { reason: 'FieldValueInvalid', field: 'metadata.ownerReferences.uid', message: 'Invalid value: "": uid must not be empty' },
    ]],
    ['a finalizer that is not a qualified name', { name: 'a', finalizers: ['a b'] }, [
      { reason: 'FieldValueInvalid', field: 'metadata.finalizers', message: `Invalid value: "a b": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')` },
    ]],
  ])('rejects %s', (_name, metadata, expected) => {
    expect(validateBuiltin('', 'serviceaccounts', sa(metadata))).toEqual(expected);
  });

  it('allows exactly one controller owner reference', () => {
    const ref = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', name, uid: `u-${name}`, controller: true });
    const causes = validateBuiltin('', 'serviceaccounts', sa({ name: 'a', ownerReferences: [ref('x'), ref('y')] }));
    expect(causes).toHaveLength(1);
    expect(causes[0]?.field).toBe('metadata.ownerReferences');
    expect(causes[0]?.message).toMatch(/: Only one reference can have Controller set to true\. Found "true" in references for ConfigMap\/x and ConfigMap\/y$/);
  });
});

import { describe, expect, it } from 'vitest';
import type { KubeObject, StatusCause } from '../../../src/kube/object.ts';
import { loadReference } from '../../fixtures/k8s-reference.ts';
import { validateBuiltin } from './validate.ts';

describe('validateBuiltin for core/v1 Events', () => {
  it('accepts the recorded event-core-v1-create.json', () => {
    expect(validateBuiltin('', 'events', loadReference<KubeObject>('event-core-v1-create.json'))).toEqual([]);
  });

  it.each<[string, Partial<KubeObject>, StatusCause[]]>([
    ['an involved object in another namespace', { involvedObject: { kind: 'Widget', name: 'w', namespace: 'other' } }, [
      { reason: 'FieldValueInvalid', field: 'involvedObject.namespace', message: 'Invalid value: "other": does not match event.namespace' },
    ]],
    ['an eventTime without reporting fields', { eventTime: '2026-11-30T00:10:00.000000Z', reason: '' }, [
      { reason: 'FieldValueRequired', field: 'reportingComponent', message: 'Required value' },
      { reason: 'FieldValueInvalid', field: 'reportingComponent', message: expect.stringContaining('Invalid value: "": name part must be non-empty') as unknown as string },
      { reason: 'FieldValueInvalid', field: 'reportingComponent', message: expect.stringContaining('name part must consist of alphanumeric characters') as unknown as string },
      { reason: 'FieldValueRequired', field: 'reportingInstance', message: 'Required value' },
      { reason: 'FieldValueRequired', field: 'action', message: 'Required value' },
      { reason: 'FieldValueRequired', field: 'reason', message: 'Required value' },
    ]],
    ['a name with a slash', { metadata: { name: 'a/b', namespace: 'kubelings' } }, [
      { reason: 'FieldValueInvalid', field: 'metadata.name', message: `Invalid value: "a/b": may not contain '/'` },
    ]],
  ])('rejects %s', (_name, over, expected) => {
    const event = { ...loadReference<KubeObject>('event-core-v1-create.json'), ...over } as KubeObject;
    expect(validateBuiltin('', 'events', event)).toEqual(expected);
  });
});

describe('validateBuiltin for events.k8s.io/v1 Events', () => {
  const event = (over: Record<string, unknown> = {}): KubeObject => ({
    metadata: { name: 'w1.1', namespace: 'kubelings' },
    eventTime: '2026-11-30T00:10:00.000000Z',
    reportingController: 'kubelings.dev/operator',
    reportingInstance: 'operator-0',
    action: 'Reconcile',
    reason: 'Created',
    type: 'Normal',
    note: 'created child',
    regarding: { kind: 'Widget', name: 'w1', namespace: 'kubelings' },
    ...over,
  });

  it('accepts a complete event', () => {
    expect(validateBuiltin('events.k8s.io', 'events', event())).toEqual([]);
  });

  it.each<[string, Record<string, unknown>, StatusCause[]]>([
    ['an unknown type', { type: 'Info' }, [{ reason: 'FieldValueInvalid', field: 'type', message: 'Invalid value: "": has invalid value: Info' }]],
    ['a deprecated count', { deprecatedCount: 2 }, [{ reason: 'FieldValueInvalid', field: 'deprecatedCount', message: 'Invalid value: "": needs to be unset' }]],
    ['a reason over 128 characters', { reason: 'r'.repeat(129) }, [{ reason: 'FieldValueInvalid', field: 'reason', message: 'Invalid value: "": can have at most 128 characters' }]],
    ['a note over 1024 characters', { note: 'n'.repeat(1025) }, [{ reason: 'FieldValueInvalid', field: 'note', message: 'Invalid value: "": can have at most 1024 characters' }]],
  ])('rejects %s', (_name, over, expected) => {
    expect(validateBuiltin('events.k8s.io', 'events', event(over))).toEqual(expected);
  });

  it('requires eventTime', () => {
    expect(validateBuiltin('events.k8s.io', 'events', event({ eventTime: null }))).toContainEqual({ reason: 'FieldValueRequired', field: 'eventTime', message: 'Required value' });
  });
});

import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/kube/object.ts';
import { BUILTIN_RESOURCES } from '../builtin-resources.ts';
import type { ResourceType } from '../resource-type.ts';
import { decodeFieldsV1, encodeFieldsV1, listTypesOf, pathString, toFieldSet } from './field-set.ts';
import { applyConfiguration, trackUpdate } from './index.ts';

const builtin = (resource: string): ResourceType => {
  const t = BUILTIN_RESOURCES.find((r) => r.resource === resource);
  if (!t) throw new Error(resource);
  return t;
};
const configMaps = builtin('configmaps');
const cronJobs = builtin('cronjobs');
const widgetType: ResourceType = {
  ...configMaps,
  group: 'example.com',
  resource: 'widgets',
  kind: 'Widget',
  custom: {
    crdName: 'widgets.example.com',
    printerColumns: [],
    schema: {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            ports: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['port', 'protocol'], items: { type: 'object' } },
            tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
            args: { type: 'array', items: { type: 'string' } },
          },
        },
      },
    },
  },
};

const keys = (type: ResourceType, value: unknown): string[] => [...toFieldSet(value, listTypesOf(type)).keys()].map(pathString);

describe('field sets', () => {
  it.each([
    ['a map of scalars: one member per key', configMaps, { data: { a: '1', b: '2' } }, ['.data.a', '.data.b']],
    ['a built-in keyed list: the item and its fields', cronJobs, { spec: { containers: [{ name: 'c', image: 'i' }] } }, ['.spec.containers[name="c"]', '.spec.containers[name="c"].name', '.spec.containers[name="c"].image']],
    ['finalizers: a set, one member per value', configMaps, { metadata: { finalizers: ['x'] } }, ['.metadata.finalizers[="x"]']],
    ['an atomic list: one member', cronJobs, { spec: { tolerations: [{ key: 'k' }] } }, ['.spec.tolerations']],
    ['a CRD map list with two keys, sorted by name', widgetType, { spec: { ports: [{ protocol: 'TCP', port: 80 }] } }, ['.spec.ports[port=80,protocol="TCP"]', '.spec.ports[port=80,protocol="TCP"].protocol', '.spec.ports[port=80,protocol="TCP"].port']],
    ['a CRD set list', widgetType, { spec: { tags: ['a'] } }, ['.spec.tags[="a"]']],
    ['a CRD list without list-type: atomic', widgetType, { spec: { args: ['a'] } }, ['.spec.args']],
    ['a keyed list with an item missing its key: atomic', cronJobs, { spec: { containers: [{ image: 'i' }] } }, ['.spec.containers']],
  ])('%s', (_name, type, value, expected) => {
    expect(keys(type, value)).toEqual(expected);
  });

  it('serializes FieldsV1 with "." on members that have children, and parses it back', () => {
    const set = toFieldSet({ spec: { containers: [{ name: 'c', image: 'i' }] }, data: { a: '1' } }, listTypesOf(cronJobs));
    const fields = encodeFieldsV1(set.keys());
    expect(fields).toEqual({ 'f:data': { 'f:a': {} }, 'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:image': {}, 'f:name': {} } } } });
    expect(decodeFieldsV1(fields)).toEqual(new Set(set.keys()));
  });

  it('shares equal FieldsV1 subtrees between encodings, and keeps different ones apart', () => {
    const owned = (name: string, image: string): Record<string, unknown> =>
      encodeFieldsV1(toFieldSet({ metadata: { labels: { owner: name } }, spec: { containers: [{ name: 'c', image }] } }, listTypesOf(cronJobs)).keys());
    const [a, b] = [owned('a', 'i'), owned('b', 'i')];
    expect(a['f:spec']).toBe(b['f:spec']);
    expect(a['f:metadata']).toBe(b['f:metadata']);
    expect(a).toBe(b);
    expect(Object.isFrozen(a['f:spec'])).toBe(true);
    const withDot = encodeFieldsV1(['f:spec\nf:containers\nk:{"name":"c"}', 'f:spec\nf:containers\nk:{"name":"c"}\nf:image']);
    const withoutDot = encodeFieldsV1(['f:spec\nf:containers\nk:{"name":"c"}\nf:image']);
    expect(withDot).toEqual({ 'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:image': {} } } } });
    expect(withoutDot).toEqual({ 'f:spec': { 'f:containers': { 'k:{"name":"c"}': { 'f:image': {} } } } });
    expect(encodeFieldsV1(['f:data\nf:a', 'f:data\nf:b'])).toEqual({ 'f:data': { 'f:a': {}, 'f:b': {} } });
    expect(encodeFieldsV1(['f:data\nf:a=b'])).toEqual({ 'f:data': { 'f:a=b': {} } });
    expect(encodeFieldsV1(['f:data\nf:a', 'f:data\nf:b'])['f:data']).not.toBe(encodeFieldsV1(['f:data\nf:a=b'])['f:data']);
  });
});

const write = (manager: string, now = '2026-11-30T10:00:00Z') => ({ type: configMaps, manager, apiVersion: 'v1', now });
const cm = (data: Record<string, string>, managedFields?: unknown[]): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', ...(managedFields ? { managedFields } : {}) }, data });

describe('managedFields of updates', () => {
  it('gives the creator every field it set, and not the system metadata', () => {
    expect(trackUpdate(write('creator'), undefined, cm({ a: '1' }), undefined)).toEqual([
      { manager: 'creator', operation: 'Update', apiVersion: 'v1', time: '2026-11-30T10:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} } } },
    ]);
  });

  it('moves a changed field to the writer, drops removed fields and keeps the time of a write that changed nothing', () => {
    const created = cm({ a: '1', b: '2' }, trackUpdate(write('creator'), undefined, cm({ a: '1', b: '2' }), undefined));
    const edited = trackUpdate(write('editor', '2026-11-30T10:05:00Z'), created, cm({ a: 'x' }), undefined);
    expect(edited?.map((e) => [(e as { manager: string }).manager, (e as { fieldsV1: unknown }).fieldsV1])).toEqual([['editor', { 'f:data': { 'f:a': {} } }]]);
    const again = cm({ a: 'x' }, edited);
    expect(trackUpdate(write('editor', '2026-11-30T11:00:00Z'), again, cm({ a: 'x' }), undefined)).toEqual(edited);
  });

  it('clears managedFields when the body sends [{}], as kube lets a client reset them', () => {
    const created = cm({ a: '1' }, trackUpdate(write('creator'), undefined, cm({ a: '1' }), undefined));
    expect(trackUpdate(write('editor'), created, cm({ a: '2' }), [{}])).toBeUndefined();
  });
});

describe('server-side apply', () => {
  it('removes a dropped keyed-list item as a whole unless another manager owns the item itself (structured-merge-diff prune)', () => {
    const type = cronJobs;
    const job = (containers: unknown[]): KubeObject => ({ apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'j' }, spec: { containers } });
    const first = applyConfiguration({ ...write('a'), type, apiVersion: 'batch/v1' }, undefined, job([{ name: 'c', image: 'i', args: ['x'] }]), false);
    if (!first.ok) throw new Error('conflict');
    const other = { ...first.object, metadata: { ...first.object.metadata, managedFields: [...(first.object.metadata.managedFields ?? []), { manager: 'b', operation: 'Apply', apiVersion: 'batch/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:containers': { 'k:{"name":"c"}': { 'f:image': {} } } } } }] } };
    const dropped = applyConfiguration({ ...write('a'), type, apiVersion: 'batch/v1' }, other, job([]), false);
    if (!dropped.ok) throw new Error('conflict');
    // b owns only the image, not the item: the item goes, and the emptied list with it (spec stays).
    expect(dropped.object['spec']).toEqual({});
    const itemOwner = { ...other, metadata: { ...other.metadata, managedFields: [...(first.object.metadata.managedFields ?? []), { manager: 'b', operation: 'Apply', apiVersion: 'batch/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:image': {}, 'f:name': {} } } } } }] } };
    const kept = applyConfiguration({ ...write('a'), type, apiVersion: 'batch/v1' }, itemOwner, job([]), false);
    if (!kept.ok) throw new Error('conflict');
    expect(kept.object['spec']).toEqual({ containers: [{ name: 'c', image: 'i' }] });
  });

  it('answers a conflict with every cause and the grouped message', () => {
    const live = cm({ a: '1', b: '2' }, trackUpdate(write('creator'), undefined, cm({ a: '1', b: '2' }), undefined));
    const outcome = applyConfiguration(write('applier'), live, cm({ a: 'x', b: 'y' }), false);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.status.message).toBe('Apply failed with 2 conflicts: conflicts with "creator" using v1:\n- .data.a\n- .data.b');
    expect(outcome.status.details?.causes).toEqual([
      { reason: 'FieldManagerConflict', message: 'conflict with "creator" using v1', field: '.data.a' },
      { reason: 'FieldManagerConflict', message: 'conflict with "creator" using v1', field: '.data.b' },
    ]);
  });
});

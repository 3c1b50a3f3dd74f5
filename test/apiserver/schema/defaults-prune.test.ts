import { describe, expect, it } from 'vitest';
import { defaultCustomResource } from './defaults.ts';
import { loadReference, widgetSchema } from '../../fixtures/k8s-reference.ts';
import { pruneCustomResource } from './prune.ts';
import type { JSONSchemaProps } from './types.ts';

interface Stored {
  spec: Record<string, unknown>;
}

describe('pruneCustomResource and defaultCustomResource on the recorded Widget', () => {
  it('turn the request into the spec of cr-create-defaults-and-pruning.json', () => {
    const recorded = loadReference<Stored>('cr-create-defaults-and-pruning.json');
    const request = {
      apiVersion: 'fixtures.example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w1', namespace: 'kubelings', bogusMeta: 1 },
      spec: { schedule: '0 2 * * *', quantity: '10Gi', free: { anything: { goes: 1 } }, bogus: true, nested: null },
      status: { observedGeneration: 1, junk: 'x' },
    };
    const removed = pruneCustomResource(widgetSchema(), request);
    defaultCustomResource(widgetSchema(), request);
    expect(request.spec).toEqual(recorded.spec);
    expect(removed).toEqual(['metadata.bogusMeta', 'spec.bogus', 'status.junk']);
    expect(request.metadata).toEqual({ name: 'w1', namespace: 'kubelings' });
  });

  it('prunes what the 1.20 server dropped silently in cr-create-fieldValidation-strict-on-1.20.json', () => {
    const recorded = loadReference<Stored>('cr-create-fieldValidation-strict-on-1.20.json');
    const request = { apiVersion: 'fixtures.example.com/v1', kind: 'Widget', metadata: { name: 'w5' }, spec: { schedule: '@daily', bogus: 'x' } };
    expect(pruneCustomResource(widgetSchema(), request)).toEqual(['spec.bogus']);
    defaultCustomResource(widgetSchema(), request);
    expect(request.spec).toEqual(recorded.spec);
  });
});

describe('pruneCustomResource', () => {
  const listSchema: JSONSchemaProps = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          items: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
          labels: { type: 'object', additionalProperties: { type: 'object', properties: { v: { type: 'string' } } } },
          open: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { known: { type: 'object', properties: { a: { type: 'string' } } } } },
          embedded: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object' } } },
        },
      },
    },
  };

  it('reports list items by index and map entries by key', () => {
    const obj = { spec: { items: [{ name: 'a' }, { name: 'b', x: 1 }], labels: { k: { v: 'ok', w: 'gone' } } } };
    expect(pruneCustomResource(listSchema, obj)).toEqual(['spec.items[1].x', 'spec.labels.k.w']);
    expect(obj.spec).toEqual({ items: [{ name: 'a' }, { name: 'b' }], labels: { k: { v: 'ok' } } });
  });

  it('keeps unknown fields under x-kubernetes-preserve-unknown-fields but still prunes known properties below it', () => {
    const obj = { spec: { open: { free: 1, known: { a: 'x', b: 'y' } } } };
    expect(pruneCustomResource(listSchema, obj)).toEqual(['spec.open.known.b']);
    expect(obj.spec.open).toEqual({ free: 1, known: { a: 'x' } });
  });

  it('keeps apiVersion, kind and metadata of an embedded resource', () => {
    const obj = { spec: { embedded: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', nope: 1 }, spec: {}, data: {} } } };
    expect(pruneCustomResource(listSchema, obj)).toEqual(['spec.embedded.metadata.nope', 'spec.embedded.data']);
    expect(obj.spec.embedded).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, spec: {} });
  });
});

describe('defaultCustomResource', () => {
  const schema: JSONSchemaProps = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        default: {},
        properties: {
          replicas: { type: 'integer', default: 1 },
          note: { type: 'string', nullable: true, default: 'n' },
          drop: { type: 'string' },
          list: { type: 'array', items: { type: 'object', properties: { port: { type: 'integer', default: 80 } } } },
          byName: { type: 'object', additionalProperties: { type: 'object', properties: { on: { type: 'boolean', default: true } } } },
        },
      },
    },
  };

  it('defaults an absent object and then its properties', () => {
    const obj: Record<string, unknown> = {};
    defaultCustomResource(schema, obj);
    expect(obj).toEqual({ spec: { replicas: 1, note: 'n' } });
  });

  it('defaults into list items and additionalProperties values', () => {
    const obj = { spec: { list: [{}, { port: 8080 }], byName: { a: {}, b: { on: false } } } };
    defaultCustomResource(schema, obj);
    expect(obj.spec).toEqual({ replicas: 1, note: 'n', list: [{ port: 80 }, { port: 8080 }], byName: { a: { on: true }, b: { on: false } } });
  });

  it('replaces a non-nullable null by its default, keeps a nullable null and drops a null without default', () => {
    const obj = { spec: { replicas: null, note: null, drop: null } };
    defaultCustomResource(schema, obj);
    expect(obj.spec).toEqual({ replicas: 1, note: null });
  });

  it('does not share default values between objects', () => {
    const shared: JSONSchemaProps = { type: 'object', properties: { m: { type: 'object', default: { a: 1 } } } };
    const one: Record<string, Record<string, number>> = {};
    const two: Record<string, Record<string, number>> = {};
    defaultCustomResource(shared, one);
    defaultCustomResource(shared, two);
    (one['m'] as Record<string, number>)['a'] = 2;
    expect(two).toEqual({ m: { a: 1 } });
  });
});

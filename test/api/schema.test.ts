import { RE2JS } from 're2js';
import { describe, expect, it } from 'vitest';
import { backupScheduleSchema, SPEC_DEFAULTS, toCrdOpenApiSchema, type SchemaNode } from '../../src/api/index.ts';

/** Every schema node with its dotted path; `[]` marks array items. */
function nodes(node: SchemaNode, path = '(root)'): [string, SchemaNode][] {
  const out: [string, SchemaNode][] = [[path, node]];
  for (const [name, child] of Object.entries((node['properties'] as Record<string, SchemaNode> | undefined) ?? {})) {
    out.push(...nodes(child, `${path}.${name}`));
  }
  if (node['items'] !== undefined) out.push(...nodes(node['items'] as SchemaNode, `${path}[]`));
  return out;
}

const crdNodes = nodes(toCrdOpenApiSchema(backupScheduleSchema));

describe('the BackupSchedule schema as a CRD openAPIV3Schema', () => {
  it.each(crdNodes.filter(([path]) => path !== '(root).metadata'))(
    'gives %s a type and a description (structural schema, kubectl explain)',
    (_path, node) => {
      expect(typeof node['type']).toBe('string');
      expect(typeof node['description']).toBe('string');
    },
  );

  it('reduces the root metadata to type: object, which is all the API server allows there', () => {
    expect(crdNodes.find(([path]) => path === '(root).metadata')?.[1]).toEqual({ type: 'object' });
  });

  it('uses no keyword a structural schema forbids', () => {
    const forbidden = ['$schema', '$id', '$ref', 'title', 'tsType', 'oneOf', 'definitions', 'uniqueItems', 'additionalItems', 'patternProperties', 'dependencies'];
    for (const [path, node] of crdNodes) {
      for (const keyword of forbidden) expect(node[keyword], `${path} has ${keyword}`).toBeUndefined();
      if (node['properties'] !== undefined) expect(node['additionalProperties'], `${path}`).toBeUndefined();
    }
  });

  it.each(crdNodes.filter(([, node]) => typeof node['pattern'] === 'string'))('writes the pattern of %s in the syntax of Go regexp (RE2), which kube-apiserver compiles', (_path, node) => {
    expect(() => RE2JS.compile(node['pattern'] as string)).not.toThrow();
  });

  it('reads the spec defaults from the schema', () => {
    expect(SPEC_DEFAULTS).toEqual({
      suspend: false,
      keepLast: 7,
      concurrencyPolicy: 'Forbid',
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 1,
      backoffLimit: 3,
    });
  });
});

import type { ResourceRegistry } from './resource-registry.ts';
import type { ResourceType } from './resource-type.ts';

/**
 * OpenAPI documents for kubectl. `/openapi/v3` lists group versions; each group-version document
 * has, for every kind, the item path with a PATCH operation carrying `x-kubernetes-group-version-kind`
 * and an inline `fieldValidation` query parameter: what cli-runtime's `query_param_verifier_v3.go`
 * looks for before it leaves validation to the server (`?fieldValidation=Strict`).
 */

function gvPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

/** `/openapi/v3`: `{ paths: { "<api/v1|apis/g/v>": { serverRelativeURL } } }`. */
export function openApiV3Root(registry: ResourceRegistry, generation: number): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const [group, versions] of registry.groups()) {
    for (const version of versions) {
      const p = gvPath(group, version);
      paths[p] = { serverRelativeURL: `/openapi/v3/${p}?hash=${generation.toString(16).padStart(16, '0')}` };
    }
  }
  return { paths };
}

const QUERY = (name: string, description: string): Record<string, unknown> => ({ name, in: 'query', description, schema: { type: 'string', uniqueItems: true } });
const WRITE_PARAMS = [
  QUERY('dryRun', 'When present, indicates that modifications should not be persisted. Valid values are: - All: all dry run stages will be processed'),
  QUERY('fieldManager', 'fieldManager is a name associated with the actor or entity that is making these changes.'),
  QUERY('fieldValidation', 'fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore - Warn - Strict'),
];

function schemaName(t: ResourceType): string {
  const reversed = t.group ? t.group.split('.').reverse().join('.') : 'io.k8s.api.core';
  return `${reversed}.${t.version}.${t.kind}`;
}

function ref(t: ResourceType): Record<string, unknown> {
  const schema = t.custom?.schema ? { $ref: `#/components/schemas/${schemaName(t)}` } : { type: 'object' };
  return { content: { 'application/json': { schema } } };
}

function operations(t: ResourceType, prefix: string): Record<string, unknown> {
  const gvk = { group: t.group, version: t.version, kind: t.kind };
  const base = t.namespaced ? `/${prefix}/namespaces/{namespace}/${t.resource}` : `/${prefix}/${t.resource}`;
  const pathParams = [
    ...(t.namespaced ? [{ name: 'namespace', in: 'path', required: true, schema: { type: 'string', uniqueItems: true } }] : []),
  ];
  const op = (action: string, id: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    operationId: `${id}${t.kind}`,
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvk,
    responses: { '200': { description: 'OK', ...ref(t) } },
    ...extra,
  });
  const item: Record<string, unknown> = {
    parameters: [...pathParams, { name: 'name', in: 'path', required: true, schema: { type: 'string', uniqueItems: true } }],
    get: op('get', 'read'),
    put: op('put', 'replace', { parameters: WRITE_PARAMS, requestBody: ref(t) }),
    patch: op('patch', 'patch', {
      parameters: [...WRITE_PARAMS, { name: 'force', in: 'query', schema: { type: 'boolean', uniqueItems: true } }],
      requestBody: { content: { 'application/json-patch+json': {}, 'application/merge-patch+json': {}, 'application/apply-patch+yaml': {}, ...(t.custom ? {} : { 'application/strategic-merge-patch+json': {} }) } },
    }),
    delete: op('delete', 'delete'),
  };
  const paths: Record<string, unknown> = {
    [base]: { parameters: pathParams, get: op('list', 'list'), post: op('post', 'create', { parameters: WRITE_PARAMS, requestBody: ref(t) }), delete: op('deletecollection', 'deleteCollection') },
    [`${base}/{name}`]: item,
  };
  if (t.subresources.includes('status')) paths[`${base}/{name}/status`] = { ...item, delete: undefined };
  return paths;
}

/** One group-version document, or undefined when the group version is not served. */
export function openApiV3GroupVersion(registry: ResourceRegistry, group: string, version: string): Record<string, unknown> | undefined {
  const types = registry.inGroupVersion(group, version);
  if (types.length === 0) return undefined;
  const prefix = gvPath(group, version);
  const paths: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = {};
  for (const t of types) {
    Object.assign(paths, operations(t, prefix));
    // Only CRD schemas are published: with no schema for a built-in kind, kubectl apply computes its
    // strategic merge patch from its compiled-in types instead of warning about a partial schema.
    const custom = t.custom?.schema;
    if (custom) schemas[schemaName(t)] = { ...custom, 'x-kubernetes-group-version-kind': [{ group: t.group, version: t.version, kind: t.kind }] };
  }
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version: 'v1.32.0' }, paths, components: { schemas } };
}

/** `/openapi/v2`: a minimal valid Swagger 2.0 document. */
export function openApiV2(): Record<string, unknown> {
  return { swagger: '2.0', info: { title: 'Kubernetes', version: 'v1.32.0' }, paths: {}, definitions: {} };
}

function protoString(field: number, value: string | Buffer): Buffer {
  const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  if (bytes.length > 127) throw new RangeError('protoString: values longer than 127 bytes are not needed here');
  return Buffer.concat([Buffer.from([(field << 3) | 2, bytes.length]), bytes]);
}

/**
 * `/openapi/v2` as kubectl requests it (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`):
 * a gnostic `openapi_v2.Document` with only `swagger: "2.0"` and `info` — no definitions, so
 * kubectl's client-side validation knows no kinds and checks nothing.
 */
export function openApiV2Protobuf(): Buffer {
  return Buffer.concat([protoString(1, '2.0'), protoString(2, Buffer.concat([protoString(1, 'Kubernetes'), protoString(2, 'v1.32.0')]))]);
}

/**
 * What kube-apiserver's Service REST storage does besides defaulting (pkg/registry/core/service/storage):
 * a create gets a single-stack IPv4 cluster IP (`clusterIP`, `clusterIPs`, `ipFamilies`,
 * `ipFamilyPolicy`), and an update that leaves them out keeps the allocated ones (`patchAllocatedValues`),
 * as a re-apply of a manifest without them must. Here the address is not drawn from an allocator but is
 * a hash of namespace/name in the default service CIDR 10.96.0.0/12: stable, and unique enough for tests.
 */
import { createHash } from 'node:crypto';
import type { KubeObject } from '../../../src/kube/object.ts';
import { ensureObj, obj, setDefault } from './json.ts';

const ALLOCATED = ['clusterIP', 'clusterIPs', 'ipFamilies', 'ipFamilyPolicy'] as const;

/** A stable address in 10.96.0.0/12 for `namespace/name` (never the network address or .1, the API server's). */
function serviceIp(namespace: string, name: string): string {
  const hash = createHash('sha256').update(`${namespace}/${name}`).digest().readUInt32BE(0);
  const offset = 2 + (hash % (2 ** 20 - 3));
  return `10.${96 + (offset >>> 16)}.${(offset >>> 8) & 255}.${offset & 255}`;
}

/** Create: allocates the cluster IP of a Service that is not headless and not an ExternalName. */
export function allocateServiceForCreate(service: KubeObject): void {
  const spec = ensureObj(service, 'spec');
  if (spec['type'] === 'ExternalName') return;
  if (spec['clusterIP'] !== 'None') setDefault(spec, 'clusterIP', serviceIp(service.metadata.namespace ?? '', service.metadata.name ?? ''));
  setDefault(spec, 'clusterIPs', [spec['clusterIP']]);
  setDefault(spec, 'ipFamilies', ['IPv4']);
  setDefault(spec, 'ipFamilyPolicy', 'SingleStack');
}

/** Update: what the request leaves out of the allocated fields is kept from the stored Service. */
export function keepServiceAllocation(next: KubeObject, old: KubeObject, subresource: string | undefined): void {
  if (subresource) return;
  const spec = ensureObj(next, 'spec');
  const oldSpec = obj(old['spec']) ?? {};
  for (const field of ALLOCATED) if (spec[field] === undefined && oldSpec[field] !== undefined) spec[field] = structuredClone(oldSpec[field]);
}

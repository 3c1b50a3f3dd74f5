import type { ResourceRegistry } from './resource-registry.ts';
import type { ResourceType } from './resource-type.ts';

/**
 * `/version` of the server: a 1.32 API (what the served kinds and behaviours follow). The
 * `kubernetesVersion` option changes only what is reported (see {@link versionInfo}).
 */
export const VERSION_INFO = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0-kubelings-test',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: 'go1.23.0',
  compiler: 'gc',
  platform: 'linux/amd64',
} as const;

/**
 * The `/version` answer reporting `version` (`1.24.17`, `v1.24.17-eks-1`), for clients that adapt to the
 * server's version; undefined keeps {@link VERSION_INFO}. Throws when it is not `[v]<major>.<minor>[…]`.
 */
export function versionInfo(version: string | undefined): Readonly<Record<string, string>> {
  if (version === undefined) return VERSION_INFO;
  const match = /^v?(\d+)\.(\d+)(.*)$/.exec(version);
  if (!match) throw new Error(`kubernetesVersion: expected <major>.<minor>[.<patch>…], got ${JSON.stringify(version)}`);
  return { ...VERSION_INFO, major: match[1] ?? '', minor: match[2] ?? '', gitVersion: version.startsWith('v') ? version : `v${version}` };
}

/** `/api`: the legacy core group's versions. */
export function apiVersions(serverAddress: string): Record<string, unknown> {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

const KUBE_VERSION = /^v(\d+)(?:(alpha|beta)(\d+))?$/;

/**
 * apimachinery `CompareKubeAwareVersionStrings` as a sort: GA before beta before alpha, higher numbers
 * first, versions that do not look like `v1beta2` last in lexical order (a CRD group's versions and
 * its preferred version are ordered this way, not by their order in `spec.versions`).
 */
export function compareKubeVersions(a: string, b: string): number {
  const ma = KUBE_VERSION.exec(a);
  const mb = KUBE_VERSION.exec(b);
  if (!ma || !mb) return ma ? -1 : mb ? 1 : a < b ? -1 : a > b ? 1 : 0;
  const rank = (m: RegExpExecArray): number => (m[2] === undefined ? 2 : m[2] === 'beta' ? 1 : 0);
  return rank(mb) - rank(ma) || Number(mb[1]) - Number(ma[1]) || Number(mb[3] ?? 0) - Number(ma[3] ?? 0);
}

function groupEntry(name: string, versions: readonly string[]): Record<string, unknown> {
  const list = [...versions].sort(compareKubeVersions).map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
  return { name, versions: list, preferredVersion: list[0] };
}

/** `/apis`: every named group with its versions (plain `APIGroupList`; aggregated discovery is not offered). */
export function apiGroupList(registry: ResourceRegistry): Record<string, unknown> {
  const groups = [...registry.groups()].filter(([g]) => g !== '').map(([g, versions]) => groupEntry(g, versions));
  return { kind: 'APIGroupList', apiVersion: 'v1', groups };
}

/** `/apis/<group>`: one `APIGroup`, or undefined when not served. */
export function apiGroup(registry: ResourceRegistry, group: string): Record<string, unknown> | undefined {
  const versions = registry.groups().get(group);
  if (!versions || group === '') return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(group, versions) };
}

function subresourceEntry(t: ResourceType, sub: string): Record<string, unknown> {
  if (sub === 'token') return { name: `${t.resource}/token`, singularName: '', namespaced: t.namespaced, group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest', verbs: ['create'] };
  if (sub === 'finalize') return { name: `${t.resource}/finalize`, singularName: '', namespaced: t.namespaced, kind: t.kind, verbs: ['update'] };
  if (sub === 'scale') return { name: `${t.resource}/scale`, singularName: '', namespaced: t.namespaced, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] };
  return { name: `${t.resource}/${sub}`, singularName: '', namespaced: t.namespaced, kind: t.kind, verbs: ['get', 'patch', 'update'] };
}

/** `/api/v1` or `/apis/<group>/<version>`: the `APIResourceList`, or undefined when not served. */
export function apiResourceList(registry: ResourceRegistry, group: string, version: string): Record<string, unknown> | undefined {
  const types = registry.inGroupVersion(group, version);
  if (types.length === 0) return undefined;
  const resources: Record<string, unknown>[] = [];
  for (const t of types) {
    resources.push({
      name: t.resource,
      singularName: t.singularName,
      namespaced: t.namespaced,
      kind: t.kind,
      verbs: [...t.verbs],
      ...(t.shortNames.length ? { shortNames: [...t.shortNames] } : {}),
      ...(t.categories.length ? { categories: [...t.categories] } : {}),
    });
    for (const sub of t.subresources) resources.push(subresourceEntry(t, sub));
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group ? `${group}/${version}` : version, resources };
}

/** Versions of aggregated discovery served: v2, and v2beta1, which kube-apiserver 1.32 still serves (removed in 1.33). */
export type AggregatedDiscoveryVersion = 'v2' | 'v2beta1';

/** Content type of aggregated discovery, as kube-apiserver labels it. */
export function aggregatedDiscoveryContentType(version: AggregatedDiscoveryVersion = 'v2'): string {
  return `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList`;
}

function discoveryResource(t: ResourceType): Record<string, unknown> {
  const responseKind = { group: t.group, version: t.version, kind: t.kind };
  return {
    resource: t.resource,
    responseKind,
    scope: t.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: t.singularName,
    verbs: [...t.verbs],
    ...(t.shortNames.length ? { shortNames: [...t.shortNames] } : {}),
    ...(t.categories.length ? { categories: [...t.categories] } : {}),
    ...(t.subresources.length
      ? {
          subresources: t.subresources.map((sub) =>
            sub === 'token'
              ? { subresource: 'token', responseKind: { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' }, verbs: ['create'] }
              : sub === 'scale'
                ? { subresource: 'scale', responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: ['get', 'patch', 'update'] }
                : { subresource: sub, responseKind, verbs: sub === 'finalize' ? ['update'] : ['get', 'patch', 'update'] },
          ),
        }
      : {}),
  };
}

/**
 * Aggregated discovery (`APIGroupDiscoveryList`, apidiscovery.k8s.io/v2 or v2beta1, the same shape): `/api` lists the core
 * group, `/apis` every named group, each version with its resources, as kubectl 1.32 asks first.
 */
export function aggregatedDiscovery(registry: ResourceRegistry, core: boolean, version: AggregatedDiscoveryVersion = 'v2'): Record<string, unknown> {
  const items = [...registry.groups()]
    .filter(([g]) => (core ? g === '' : g !== ''))
    .map(([group, versions]) => ({
      metadata: { name: group, creationTimestamp: null },
      // The first version is the preferred one to clients of aggregated discovery.
      versions: [...versions].sort(compareKubeVersions).map((version) => ({ version, resources: registry.inGroupVersion(group, version).map(discoveryResource), freshness: 'Current' })),
    }));
  return { kind: 'APIGroupDiscoveryList', apiVersion: `apidiscovery.k8s.io/${version}`, metadata: {}, items };
}

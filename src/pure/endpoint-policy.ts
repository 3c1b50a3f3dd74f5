/**
 * Which object store endpoints backup Jobs may send to. `spec.destination.objectStore.endpoint` makes the
 * backup Pod send signed requests and the backup itself (an etcd snapshot holds every Secret of the
 * cluster) to any URL it can reach, from inside the cluster network: cloud metadata services and
 * in-cluster HTTP services included (SSRF). So, as with images, the operator's administrators decide,
 * with the controller flag `--allowed-backup-endpoints`. A schedule without `endpoint` (AWS S3 of its
 * region) is always allowed: by default only AWS is.
 */

import { wildcardRegExp } from './wildcard-pattern.ts';

/** The controller flag holding the allow-list (named in conditions and errors). */
export const ALLOWED_ENDPOINTS_FLAG = '--allowed-backup-endpoints';

/**
 * An endpoint as compared: scheme and host lower-cased, the scheme's default port and a trailing `/`
 * dropped (the schema allows nothing else in it), so `HTTPS://MinIO:443/` is `https://minio`.
 */
export function normalizeEndpoint(endpoint: string): string {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/]*)\/?$/.exec(endpoint);
  if (!m) return endpoint;
  const scheme = m[1]!.toLowerCase();
  const hostPort = m[2]!.toLowerCase();
  const defaultPort = scheme === 'https' ? ':443' : scheme === 'http' ? ':80' : undefined;
  return `${scheme}://${defaultPort !== undefined && hostPort.endsWith(defaultPort) ? hostPort.slice(0, -defaultPort.length) : hostPort}`;
}

/**
 * Whether `endpoint` matches `pattern`: equal once both are normalized, or, where the pattern has `*`,
 * with `*` standing for any run of characters but `/` (`https://*.s3.example.com`, `https://minio.storage:*`).
 * A lone `*` matches every endpoint (the administrators may decide so).
 */
export function endpointMatches(endpoint: string, pattern: string): boolean {
  if (pattern === '*') return true;
  const target = normalizeEndpoint(endpoint);
  if (!pattern.includes('*')) return target === normalizeEndpoint(pattern);
  return wildcardRegExp(pattern.toLowerCase(), '[^/]*').test(target);
}

/** Whether a schedule may use `endpoint` (undefined: AWS, always allowed). */
export function endpointAllowed(endpoint: string | undefined, patterns: readonly string[]): boolean {
  return endpoint === undefined || patterns.some((p) => endpointMatches(endpoint, p));
}

/**
 * Why a pattern is unusable, or undefined when it is fine: not `*` and not an http(s)://host[:port]
 * (with `*` anywhere), or longer than 256 characters.
 */
export function endpointPatternProblem(pattern: string): string | undefined {
  if (pattern === '*') return undefined;
  if (pattern.length > 256) return `endpoint pattern ${JSON.stringify(pattern.slice(0, 40))}… is longer than 256 characters`;
  if (!/^https?:\/\/[^\s/@]+\/?$/i.test(pattern)) return `endpoint pattern ${JSON.stringify(pattern)} is not an http(s)://host[:port] URL (or "*")`;
  return undefined;
}

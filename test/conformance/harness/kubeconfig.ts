/**
 * Reads the current context of a kubeconfig into an {@link Endpoint}: server URL, bearer token (inline or
 * file) or client certificate, CA data or file, and `insecure-skip-tls-verify`.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { Endpoint } from './http-client.ts';

interface NamedEntry {
  readonly name: string;
}

interface KubeconfigCluster {
  readonly server?: string;
  readonly 'certificate-authority-data'?: string;
  readonly 'certificate-authority'?: string;
  readonly 'insecure-skip-tls-verify'?: boolean;
}

interface KubeconfigUser {
  readonly token?: string;
  readonly tokenFile?: string;
  readonly 'client-certificate-data'?: string;
  readonly 'client-key-data'?: string;
  readonly 'client-certificate'?: string;
  readonly 'client-key'?: string;
}

interface KubeconfigFile {
  readonly 'current-context'?: string;
  readonly contexts?: ReadonlyArray<NamedEntry & { readonly context?: { readonly cluster?: string; readonly user?: string } }>;
  readonly clusters?: ReadonlyArray<NamedEntry & { readonly cluster?: KubeconfigCluster }>;
  readonly users?: ReadonlyArray<NamedEntry & { readonly user?: KubeconfigUser }>;
}

const b64 = (s: string): Buffer => Buffer.from(s, 'base64');

/** Parses the kubeconfig at `path` and resolves its current context. */
export function endpointFromKubeconfig(path: string): Endpoint {
  const doc = parse(readFileSync(path, 'utf8')) as KubeconfigFile;
  const ctxName = doc['current-context'];
  const ctx = doc.contexts?.find((c) => c.name === ctxName)?.context ?? doc.contexts?.[0]?.context;
  if (!ctx) throw new Error(`kubeconfig ${path}: no context (current-context ${String(ctxName)})`);
  const cluster = doc.clusters?.find((c) => c.name === ctx.cluster)?.cluster;
  if (!cluster?.server) throw new Error(`kubeconfig ${path}: cluster ${String(ctx.cluster)} has no server`);
  const user = doc.users?.find((u) => u.name === ctx.user)?.user ?? {};
  const tls: { ca?: Buffer; cert?: Buffer; key?: Buffer; rejectUnauthorized?: boolean } = {};
  if (cluster['certificate-authority-data']) tls.ca = b64(cluster['certificate-authority-data']);
  else if (cluster['certificate-authority']) tls.ca = readFileSync(cluster['certificate-authority']);
  if (cluster['insecure-skip-tls-verify']) tls.rejectUnauthorized = false;
  if (user['client-certificate-data']) tls.cert = b64(user['client-certificate-data']);
  else if (user['client-certificate']) tls.cert = readFileSync(user['client-certificate']);
  if (user['client-key-data']) tls.key = b64(user['client-key-data']);
  else if (user['client-key']) tls.key = readFileSync(user['client-key']);
  const token = user.token ?? (user.tokenFile ? readFileSync(user.tokenFile, 'utf8').trim() : undefined);
  return { server: cluster.server, ...(token ? { token } : {}), tls };
}

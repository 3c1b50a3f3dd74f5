/**
 * Where the API server is and how to authenticate to it: in-cluster service account or a kubeconfig
 * file, resolved into plain TLS options and a bearer-token source for `node:https`.
 *
 * Deliberately not `@kubernetes/client-node`: importing it costs ~90 MiB of RSS. It is loaded lazily,
 * and only for kubeconfig users that authenticate with `exec` or `auth-provider` plugins, which we do
 * not reimplement.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { RequestOptions } from 'node:https';
import { parse as parseYaml } from 'yaml';
import { realClock, type Clock } from '../runtime/clock.ts';

/** The fixed paths a pod's service account is mounted at. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** How a request proves who it is. */
export type KubeAuth =
  | { readonly type: 'none' }
  | { readonly type: 'token'; readonly token: string }
  | { readonly type: 'tokenFile'; readonly path: string }
  /** `exec` / `auth-provider` users: delegated to `@kubernetes/client-node`, loaded on first use. */
  | { readonly type: 'delegated'; readonly kubeconfigYaml: string; readonly context: string };

/** Options for {@link KubeConfig}. */
export interface KubeConfigOptions {
  /** The API server's base URL, e.g. `https://10.0.0.1:443`. */
  readonly server: string;
  /** PEM CA bundle to trust. @default Node's default trust store */
  readonly ca?: string | Buffer;
  /** PEM client certificate. @default none */
  readonly cert?: string | Buffer;
  /** PEM client key. @default none */
  readonly key?: string | Buffer;
  /** Skip TLS verification (kubeconfig `insecure-skip-tls-verify`). @default false */
  readonly insecureSkipTlsVerify?: boolean;
  /** Default namespace of the context / service account. @default 'default' */
  readonly namespace?: string;
  /** How requests authenticate. @default { type: 'none' } */
  readonly auth?: KubeAuth;
  /**
   * How long a token read from a file is reused before the file is read again. Bound service
   * account tokens rotate (kubelet refreshes them well before expiry), so client-go re-reads the
   * file every minute (`transport.NewCachedFileTokenSource`). @default 60_000
   */
  readonly tokenFileRefreshMs?: number;
  /** Clock for the token cache. @default realClock */
  readonly clock?: Clock;
}

/** Options for {@link KubeConfig.fromKubeconfig}. */
export interface KubeconfigLoadOptions {
  /** Context to use. @default the file's `current-context` */
  readonly context?: string;
  /** Directory relative file paths are resolved against. @default the current directory */
  readonly baseDir?: string;
}

interface NamedEntry<T> {
  name?: string;
  cluster?: T;
  user?: T;
  context?: T;
}
interface RawKubeconfig {
  'current-context'?: string;
  clusters?: NamedEntry<Record<string, unknown>>[];
  users?: NamedEntry<Record<string, unknown>>[];
  contexts?: NamedEntry<Record<string, unknown>>[];
}

/** A resolved connection to one API server. */
export class KubeConfig {
  readonly server: string;
  readonly namespace: string;
  readonly auth: KubeAuth;
  readonly #tls: Pick<RequestOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized'>;
  readonly #clock: Clock;
  readonly #refreshMs: number;
  #cachedToken: { value: string; readAt: number } | undefined;
  #delegate: Promise<(opts: RequestOptions) => Promise<void>> | undefined;

  constructor(options: KubeConfigOptions) {
    let url: URL;
    try {
      url = new URL(options.server);
    } catch {
      throw new TypeError(`server: "${options.server}" is not a URL (expected e.g. https://host:6443)`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new TypeError(`server: protocol "${url.protocol}" is not supported (use https: or http:)`);
    }
    this.server = options.server.replace(/\/+$/, '');
    this.namespace = options.namespace ?? 'default';
    this.auth = options.auth ?? { type: 'none' };
    this.#clock = options.clock ?? realClock;
    this.#refreshMs = options.tokenFileRefreshMs ?? 60_000;
    this.#tls = {
      ...(options.ca !== undefined ? { ca: options.ca } : {}),
      ...(options.cert !== undefined ? { cert: options.cert } : {}),
      ...(options.key !== undefined ? { key: options.key } : {}),
      rejectUnauthorized: !(options.insecureSkipTlsVerify ?? false),
    };
  }

  /** TLS settings for an `https.Agent`. */
  tlsOptions(): Pick<RequestOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized'> {
    return { ...this.#tls };
  }

  /**
   * Adds authentication to a request's options (the `Authorization` header, or whatever an exec
   * plugin produces). Token files are re-read at most every `tokenFileRefreshMs`.
   */
  async authenticate(opts: RequestOptions): Promise<void> {
    const auth = this.auth;
    switch (auth.type) {
      case 'none':
        return;
      case 'token':
        setHeader(opts, 'Authorization', `Bearer ${auth.token}`);
        return;
      case 'tokenFile': {
        const now = this.#clock.now();
        if (!this.#cachedToken || now - this.#cachedToken.readAt >= this.#refreshMs) {
          const value = (await readFile(auth.path, 'utf8')).trim();
          this.#cachedToken = { value, readAt: now };
        }
        setHeader(opts, 'Authorization', `Bearer ${this.#cachedToken.value}`);
        return;
      }
      case 'delegated':
        this.#delegate ??= loadDelegate(auth.kubeconfigYaml, auth.context);
        await (await this.#delegate)(opts);
        return;
    }
  }

  /**
   * Forgets a token read from a file, so the next request reads the file again. Called on 401: a
   * rotated token (kubelet re-issues projected tokens before they expire) is picked up at once instead
   * of after `tokenFileRefreshMs`.
   */
  invalidateToken(): void {
    this.#cachedToken = undefined;
  }

  /**
   * In-cluster configuration from `KUBERNETES_SERVICE_HOST`/`_PORT` and the mounted service account
   * (token, CA, namespace), as client-go's `rest.InClusterConfig`.
   */
  static inCluster(options: { readonly env?: NodeJS.ProcessEnv; readonly dir?: string; readonly clock?: Clock } = {}): KubeConfig {
    const env = options.env ?? process.env;
    const dir = options.dir ?? SERVICE_ACCOUNT_DIR;
    const host = env['KUBERNETES_SERVICE_HOST'];
    const port = env['KUBERNETES_SERVICE_PORT'];
    if (!host || !port) {
      throw new Error('in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set (not running in a pod?)');
    }
    const hostPart = host.includes(':') ? `[${host}]` : host; // IPv6 service IPs need brackets
    let namespace = 'default';
    try {
      namespace = readFileSync(join(dir, 'namespace'), 'utf8').trim() || 'default';
    } catch {
      // client-go also tolerates a missing namespace file.
    }
    return new KubeConfig({
      server: `https://${hostPart}:${port}`,
      ca: readFileSync(join(dir, 'ca.crt')),
      namespace,
      auth: { type: 'tokenFile', path: join(dir, 'token') },
      ...(options.clock ? { clock: options.clock } : {}),
    });
  }

  /** Loads a kubeconfig file (the first of `KUBECONFIG`'s paths, or `~/.kube/config`). */
  static fromKubeconfigFile(path: string, options: Omit<KubeconfigLoadOptions, 'baseDir'> = {}): KubeConfig {
    const text = readFileSync(path, 'utf8');
    return KubeConfig.fromKubeconfig(text, { ...options, baseDir: join(path, '..') });
  }

  /** Parses kubeconfig YAML and resolves its context into a connection. */
  static fromKubeconfig(yamlText: string, options: KubeconfigLoadOptions = {}): KubeConfig {
    const raw = (parseYaml(yamlText) ?? {}) as RawKubeconfig;
    const contextName = options.context ?? raw['current-context'];
    if (!contextName) throw new Error('kubeconfig: no context given and current-context is not set');
    const context = findNamed(raw.contexts, contextName, 'contexts', 'context');
    const clusterName = str(context['cluster'], `contexts[${contextName}].context.cluster`);
    const cluster = findNamed(raw.clusters, clusterName, 'clusters', 'cluster');
    const userName = context['user'] === undefined ? undefined : str(context['user'], `contexts[${contextName}].context.user`);
    const user = userName === undefined ? {} : findNamed(raw.users, userName, 'users', 'user');
    const base = options.baseDir ?? process.cwd();
    const file = (field: string, value: unknown): Buffer => readFileSync(resolvePath(base, str(value, field)));
    const data = (field: string, value: unknown): Buffer => Buffer.from(str(value, field), 'base64');
    const pem = (entry: Record<string, unknown>, key: string, where: string): Buffer | undefined =>
      entry[`${key}-data`] !== undefined
        ? data(`${where}.${key}-data`, entry[`${key}-data`])
        : entry[key] !== undefined
          ? file(`${where}.${key}`, entry[key])
          : undefined;

    let auth: KubeAuth = { type: 'none' };
    if (user['exec'] !== undefined || user['auth-provider'] !== undefined) {
      auth = { type: 'delegated', kubeconfigYaml: yamlText, context: contextName };
    } else if (user['token'] !== undefined) {
      auth = { type: 'token', token: str(user['token'], `users[${userName}].user.token`) };
    } else if (user['tokenFile'] !== undefined) {
      auth = { type: 'tokenFile', path: resolvePath(base, str(user['tokenFile'], `users[${userName}].user.tokenFile`)) };
    }
    const ca = pem(cluster, 'certificate-authority', `clusters[${clusterName}].cluster`);
    const cert = pem(user, 'client-certificate', `users[${userName}].user`);
    const key = pem(user, 'client-key', `users[${userName}].user`);
    const namespace = context['namespace'];
    return new KubeConfig({
      server: str(cluster['server'], `clusters[${clusterName}].cluster.server`),
      ...(ca ? { ca } : {}),
      ...(cert ? { cert } : {}),
      ...(key ? { key } : {}),
      insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true,
      ...(typeof namespace === 'string' && namespace ? { namespace } : {}),
      auth,
    });
  }

  /**
   * The usual resolution order: `KUBECONFIG` (first path), then in-cluster when running in a pod,
   * then `~/.kube/config`.
   */
  static loadDefault(env: NodeJS.ProcessEnv = process.env): KubeConfig {
    const fromEnv = env['KUBECONFIG']?.split(process.platform === 'win32' ? ';' : ':').find((p) => p.length > 0);
    if (fromEnv) return KubeConfig.fromKubeconfigFile(fromEnv);
    if (env['KUBERNETES_SERVICE_HOST']) return KubeConfig.inCluster({ env });
    return KubeConfig.fromKubeconfigFile(join(env['HOME'] ?? homedir(), '.kube', 'config'));
  }
}

function setHeader(opts: RequestOptions, name: string, value: string): void {
  opts.headers = { ...(opts.headers as Record<string, string> | undefined), [name]: value };
}

function str(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new TypeError(`kubeconfig: ${field} must be a non-empty string, got ${JSON.stringify(value)}`);
  }
  return value;
}

function resolvePath(base: string, path: string): string {
  return path.startsWith('/') ? path : join(base, path);
}

function findNamed(
  list: NamedEntry<Record<string, unknown>>[] | undefined,
  name: string,
  section: 'clusters' | 'users' | 'contexts',
  field: 'cluster' | 'user' | 'context',
): Record<string, unknown> {
  const entry = list?.find((e) => e.name === name);
  if (!entry) throw new Error(`kubeconfig: ${section} has no entry named "${name}"`);
  return entry[field] ?? {};
}

/**
 * `exec` and `auth-provider` users need plugin machinery (credential caching, interactive login,
 * cloud SDK calls) that we do not reimplement: `@kubernetes/client-node` is imported here, lazily,
 * so its ~90 MiB are paid only by users who need it (never in-cluster).
 */
async function loadDelegate(yamlText: string, context: string): Promise<(opts: RequestOptions) => Promise<void>> {
  const { KubeConfig: ClientNodeKubeConfig } = await import('@kubernetes/client-node');
  const kc = new ClientNodeKubeConfig();
  kc.loadFromString(yamlText);
  kc.setCurrentContext(context);
  return async (opts) => {
    await kc.applyToHTTPSOptions(opts);
  };
}

/**
 * The test API server as its own process (`test/apiserver/cli.ts`), as kube-apiserver is: its event
 * loop and heap are not shared with the test's load generator and bookkeeping, so what the request log
 * times is the server's work alone. Used where a test measures latency through the server (the soak);
 * the request log is read over `POST /debug/requests/drain`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import type { LoopDelayStats } from '../apiserver/debug-endpoints.ts';
import { kubeconfigYaml } from '../apiserver/kubeconfig.ts';
import { SERVER_CERT_PEM } from '../apiserver/listener.ts';
import type { RequestLogEntry } from '../apiserver/request-log.ts';

const CLI = fileURLToPath(new URL('../apiserver/cli.ts', import.meta.url));
const TSX_LOADER = fileURLToPath(new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url));

/** Options of {@link ApiServerProcess.start}. */
export interface ApiServerProcessOptions {
  /** Flags of `npm run apiserver` (e.g. `--enforce-owner-reference-permissions`); `--port` and `--kubeconfig` are set. @default [] */
  readonly flags?: readonly string[];
  /** Node flags of the server process (`--cpu-prof`). @default [] */
  readonly nodeFlags?: readonly string[];
  /** How long to wait for it to listen. @default 30_000 */
  readonly startTimeoutMs?: number;
}

/** Options of {@link ApiServerProcess.kubeconfig}. */
export interface ProcessKubeconfigOptions {
  /** Bearer token. @default the admin token */
  readonly token?: string;
  /** Path of a file holding the token; replaces `token`. */
  readonly tokenFile?: string;
  /** The user's name in the kubeconfig. @default 'admin' */
  readonly user?: string;
}

/** A test API server running as a child process. */
export class ApiServerProcess {
  readonly child: ChildProcess;
  /** Plain HTTP, `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** `https://127.0.0.1:<port>` (kubeconfigs use it). */
  readonly httpsUrl: string;
  readonly adminToken: string;
  readonly #dir: string;
  readonly #exited: Promise<void>;

  private constructor(child: ChildProcess, url: string, adminToken: string, dir: string, exited: Promise<void>) {
    this.child = child;
    this.url = url;
    this.httpsUrl = url.replace(/^http:/, 'https:');
    this.adminToken = adminToken;
    this.#dir = dir;
    this.#exited = exited;
  }

  /** Spawns `test/apiserver/cli.ts` on a free port and resolves once it listens. */
  static async start(options: ApiServerProcessOptions = {}): Promise<ApiServerProcess> {
    const dir = mkdtempSync(join(tmpdir(), 'bks-apiserver-'));
    const kubeconfig = join(dir, 'admin.kubeconfig');
    const child = spawn(process.execPath, [...(options.nodeFlags ?? []), '--import', TSX_LOADER, CLI, '--port', '0', '--kubeconfig', kubeconfig, ...(options.flags ?? [])], { stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let output = '';
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the test API server did not listen within ${options.startTimeoutMs ?? 30_000} ms: ${output}`)), options.startTimeoutMs ?? 30_000);
        const onData = (d: Buffer): void => {
          output += d.toString();
          const m = /listening on (http:\/\/\S+?);/.exec(output);
          if (m) {
            clearTimeout(timer);
            resolve(m[1] as string);
          }
        };
        child.stdout?.on('data', onData);
        child.stderr?.on('data', onData);
        child.once('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`the test API server exited with ${code}: ${output}`));
        });
      });
      // Keep draining its output so a chatty server never blocks on a full pipe.
      child.stdout?.removeAllListeners('data').resume();
      child.stderr?.removeAllListeners('data').on('data', (d: Buffer) => process.stderr.write(d));
      const config = parseYaml(readFileSync(kubeconfig, 'utf8')) as { users: { user: { token: string } }[] };
      return new ApiServerProcess(child, url, config.users[0]?.user.token ?? '', dir, exited);
    } catch (err) {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** A kubeconfig (YAML) for this server: the admin's unless a token or token file is given. */
  kubeconfig(o: ProcessKubeconfigOptions = {}): string {
    if (o.user !== undefined && o.user !== 'admin' && o.token === undefined && o.tokenFile === undefined) {
      throw new Error(`kubeconfig: user ${o.user} needs a token or tokenFile (static tokens are minted only in-process)`);
    }
    const credential = o.tokenFile !== undefined ? { tokenFile: o.tokenFile } : { token: o.token ?? this.adminToken };
    return kubeconfigYaml(this.httpsUrl, SERVER_CERT_PEM, o.user ?? 'admin', credential);
  }

  /** A token for the ServiceAccount through the TokenRequest API, as kubelet asks for one. @default expiry 3600 s */
  async serviceAccountToken(namespace: string, name: string, expirationSeconds = 3600): Promise<string> {
    const body = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds } };
    const answer = await this.#call('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, body);
    const token = (answer as { status?: { token?: string } }).status?.token;
    if (!token) throw new Error(`TokenRequest for ${namespace}/${name}: no token in the answer`);
    return token;
  }

  /** The request log's entries since the last drain, oldest first (removed from the server's log). */
  async drainRequestLog(): Promise<RequestLogEntry[]> {
    return ((await this.#call('POST', '/debug/requests/drain')) as { items: RequestLogEntry[] }).items;
  }

  /** Starts measuring the server's event-loop delay afresh. */
  async resetEventLoopDelay(): Promise<void> {
    await this.#call('DELETE', '/debug/event-loop-delay');
  }

  /** The server's event-loop delay since {@link resetEventLoopDelay}. */
  async eventLoopDelay(): Promise<LoopDelayStats> {
    return (await this.#call('GET', '/debug/event-loop-delay')) as LoopDelayStats;
  }

  /** SIGTERM (the CLI exits 0), SIGKILL after 10 s; removes its folder. */
  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
      await this.#exited;
      clearTimeout(timer);
    }
    rmSync(this.#dir, { recursive: true, force: true });
  }

  async #call(method: string, path: string, body?: unknown): Promise<unknown> {
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return JSON.parse(text) as unknown;
  }
}

/**
 * Runs a container of the shared image with Debian's runc the way kubelet would run a Pod's container:
 * from the Pod spec the operator builds (a CronJob's or Restore Job's, dist/'s Deployment), the image
 * config umoci turned into a runtime spec, the container's args, env and security context (uid/gid,
 * read-only root file system, capabilities dropped, no privilege escalation), and its volume mounts
 * bound to folders of this machine (emptyDirs as tmpfs). The container shares the host's network
 * namespace, so the loopback servers of the tests (test API server, etcd, Swift) are reachable as on
 * a node with host networking; no cgroup namespace and no resource limits: this host's hybrid cgroup
 * hierarchy is not one runc can manage (resources are measured by the benchmarks instead).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import type { SharedImage } from './shared-image.ts';

const run = promisify(execFile);

/** Where the run's runc keeps container state (its own `--root`: other runc users are not disturbed). */
function runcRoot(): string {
  const dir = join(process.env['BKS_TEST_TMP'] ?? '/tmp', 'runc-state');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** What the test supplies that the cluster would: claims, Secrets, extra env. */
export interface PodEnvironment {
  /** Host folders standing for PersistentVolumeClaims, by claim name. */
  readonly claims?: Readonly<Record<string, string>>;
  /** Secrets by name, each a map of key to value: for secret volumes and env `secretKeyRef`s. */
  readonly secrets?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** Host folders for other volumes (the ServiceAccount's projected one), by volume name. */
  readonly volumes?: Readonly<Record<string, string>>;
  /** Env kubelet adds (`KUBERNETES_SERVICE_HOST`, …). */
  readonly env?: Readonly<Record<string, string>>;
  /** Replaces the container's args (e.g. ephemeral listen ports). @default the spec's */
  readonly args?: readonly string[];
  /** Replaces the image's entrypoint, as a container's `command` does. @default the spec's command, else the image's */
  readonly command?: readonly string[];
}

type RuntimeSpec = {
  process: { terminal: boolean; user: { uid: number; gid: number; additionalGids?: number[] }; args: string[]; env: string[]; cwd: string; capabilities?: Record<string, string[]>; noNewPrivileges?: boolean };
  root: { path: string; readonly?: boolean };
  mounts: { destination: string; type?: string; source: string; options: string[] }[];
  linux: { namespaces: { type: string }[]; resources?: unknown };
  hostname?: string;
};

/** Bytes of a Kubernetes quantity (`64Mi`, `1Gi`, `500M`). */
function quantityBytes(q: string): number {
  const m = /^(\d+)(Ki|Mi|Gi|K|M|G)?$/.exec(q);
  if (!m) throw new Error(`container: cannot read the quantity ${JSON.stringify(q)}`);
  const unit = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, K: 1e3, M: 1e6, G: 1e9 }[m[2] as 'Ki'] ?? 1;
  return Number(m[1]) * unit;
}

/**
 * A secret volume as kubelet writes it into `dir`: the Secret's keys (or the volume's `items`) as files
 * of `defaultMode` (0644 unless set), group `fsGroup` so a 0440 key is readable by the Pod's user.
 */
function writeSecretVolume(dir: string, volume: NonNullable<NonNullable<IPodSpec['volumes']>[number]['secret']>, data: Readonly<Record<string, string>> | undefined, fsGroup: number | undefined): void {
  if (data === undefined) throw new Error(`container: no Secret ${volume.secretName} given`);
  mkdirSync(dir, { mode: 0o755 });
  const items: { key: string; path: string; mode?: number }[] = volume.items ?? Object.keys(data).map((key) => ({ key, path: key }));
  for (const item of items) {
    const value = data[item.key];
    if (value === undefined) throw new Error(`container: Secret ${volume.secretName} has no key ${item.key}`);
    const file = join(dir, item.path);
    writeFileSync(file, value);
    chmodSync(file, item.mode ?? volume.defaultMode ?? 0o644);
    chownSync(file, 0, fsGroup ?? 0);
  }
}

/** The runtime spec for `container` of `pod`: umoci's spec of the image, changed as kubelet would; secret volumes go under `scratch`. */
export function runtimeSpec(image: SharedImage, pod: IPodSpec, container: IContainer, environment: PodEnvironment, scratch: string): RuntimeSpec {
  const spec = JSON.parse(readFileSync(join(image.bundle, 'config.json'), 'utf8')) as RuntimeSpec;
  const entrypoint = environment.command ?? container.command ?? spec.process.args;
  const podSecurity = pod.securityContext ?? {};
  const security = container.securityContext ?? {};
  const env = [...spec.process.env.filter((e) => !e.startsWith('TERM='))];
  for (const e of container.env ?? []) {
    const ref = e.valueFrom?.secretKeyRef;
    const value = ref ? environment.secrets?.[ref.name ?? '']?.[ref.key] : e.value;
    if (value === undefined && ref !== undefined && ref.optional !== true) throw new Error(`container: no value for secret ${ref.name}/${ref.key} (env ${e.name})`);
    if (value !== undefined) env.push(`${e.name}=${value}`);
  }
  for (const [name, value] of Object.entries(environment.env ?? {})) env.push(`${name}=${value}`);
  const uid = security.runAsUser ?? podSecurity.runAsUser ?? spec.process.user.uid;
  const gid = security.runAsGroup ?? podSecurity.runAsGroup ?? spec.process.user.gid;
  spec.process = {
    ...spec.process,
    terminal: false,
    user: { uid, gid, ...(podSecurity.fsGroup === undefined ? {} : { additionalGids: [podSecurity.fsGroup] }) },
    args: [...entrypoint, ...(environment.args ?? container.args ?? [])],
    env,
    ...(security.capabilities?.drop?.includes('ALL') ? { capabilities: { bounding: [], effective: [], inheritable: [], permitted: [], ambient: [] } } : {}),
    noNewPrivileges: security.allowPrivilegeEscalation === false,
  };
  spec.root = { path: join(image.bundle, 'rootfs'), readonly: security.readOnlyRootFilesystem === true };
  for (const mount of container.volumeMounts ?? []) {
    const volume = pod.volumes?.find((v) => v.name === mount.name);
    if (!volume) throw new Error(`container: volume mount ${mount.name} names no volume of the Pod`);
    if (volume.emptyDir) {
      const size = volume.emptyDir.sizeLimit === undefined ? [] : [`size=${quantityBytes(String(volume.emptyDir.sizeLimit))}`];
      spec.mounts.push({ destination: mount.mountPath, type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'nodev', 'mode=1777', ...size] });
      continue;
    }
    let host: string | undefined;
    if (volume.persistentVolumeClaim) host = environment.claims?.[volume.persistentVolumeClaim.claimName];
    else if (volume.secret) {
      host = join(scratch, `secret-${volume.name}`);
      writeSecretVolume(host, volume.secret, environment.secrets?.[volume.secret.secretName ?? ''], podSecurity.fsGroup);
    } else host = environment.volumes?.[mount.name];
    if (host === undefined) throw new Error(`container: no host folder for volume ${mount.name}`);
    spec.mounts.push({ destination: mount.mountPath, type: 'bind', source: host, options: ['rbind', mount.readOnly === true ? 'ro' : 'rw'] });
  }
  // The host's network (loopback servers); no cgroup namespace or limits (see the file's comment).
  spec.linux.namespaces = spec.linux.namespaces.filter((n) => n.type !== 'network' && n.type !== 'cgroup');
  delete spec.linux.resources;
  return spec;
}

let started = 0;

/** A running container (`runc run`, in the foreground: signals to it reach the container's process). */
export class Container {
  readonly id: string;
  readonly child: ChildProcess;
  readonly #bundle: string;
  #stdout = '';
  #stderr = '';
  readonly #exited: Promise<number | null>;

  private constructor(id: string, bundle: string, child: ChildProcess) {
    this.id = id;
    this.#bundle = bundle;
    this.child = child;
    child.stdout?.on('data', (c: Buffer) => (this.#stdout += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (this.#stderr += c.toString()));
    this.#exited = new Promise((resolve) =>
      child.once('close', (code, signal) => {
        rmSync(bundle, { recursive: true, force: true });
        resolve(code ?? (signal ? 128 : null));
      }),
    );
  }

  /** Starts `container` of `pod` from the shared image. */
  static start(image: SharedImage, pod: IPodSpec, container: IContainer, environment: PodEnvironment = {}): Container {
    const id = `bks-${process.pid}-${++started}`;
    const bundle = mkdtempSync(join(process.env['BKS_TEST_TMP'] ?? '/tmp', 'bks-container-'));
    chmodSync(bundle, 0o755);
    writeFileSync(join(bundle, 'config.json'), JSON.stringify(runtimeSpec(image, pod, container, environment, bundle)));
    const child = spawn('runc', ['--root', runcRoot(), 'run', '--bundle', bundle, id], { stdio: ['ignore', 'pipe', 'pipe'] });
    return new Container(id, bundle, child);
  }

  get stdout(): string {
    return this.#stdout;
  }

  get stderr(): string {
    return this.#stderr;
  }

  /** Resolves with the exit code (runc's, which is the container process's). */
  exited(): Promise<number | null> {
    return this.#exited;
  }

  /** Sends SIGTERM (runc forwards it), then SIGKILL to the container after `graceMs`. */
  async stop(graceMs = 15_000): Promise<number | null> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return this.#exited;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => void run('runc', ['--root', runcRoot(), 'kill', this.id, 'KILL']).catch(() => undefined), graceMs);
    try {
      return await this.#exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Runs a container to its end; resolves with its exit code and output. */
export async function runToEnd(image: SharedImage, pod: IPodSpec, container: IContainer, environment: PodEnvironment = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const c = Container.start(image, pod, container, environment);
  const code = await c.exited();
  return { code, stdout: c.stdout, stderr: c.stderr };
}

/** Kills and deletes every container this process started that is still there (suites call it in afterAll). */
export async function removeContainers(): Promise<void> {
  const { stdout } = await run('runc', ['--root', runcRoot(), 'list', '--quiet']).catch(() => ({ stdout: '' }));
  const ours = stdout.split('\n').filter((id) => id.startsWith(`bks-${process.pid}-`));
  await Promise.all(ours.map((id) => run('runc', ['--root', runcRoot(), 'delete', '--force', id]).catch(() => undefined)));
}

/**
 * Runs the backup runner the way the CronJob does: the bundle (what the image runs) as its own process
 * with the image's V8 flags, and the container args and env of `buildCronJob(<golden input>)`, the
 * contract's mount paths mapped onto temp directories.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import { bundleController } from '../../scripts/bundle.ts';
import type { BackupSchedule } from '../../src/api/index.ts';
import { DESTINATION_MOUNT_PATH, ETCD_TLS_MOUNT_PATH, SOURCE_MOUNT_PATH, TMP_MOUNT_PATH } from '../../src/pure/backup-contract.ts';
import { buildCronJob } from '../../src/pure/index.ts';
import { CONTROLLER_NODE_FLAGS } from '../../src/controller/node-flags.ts';

/** Builds the image's bundle into a temp dir readable by every user (tests also run it as uid 65532). */
export async function buildRunnerBundle(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'bks-runner-bundle-'));
  chmodSync(dir, 0o755);
  const outfile = join(dir, 'controller.mjs');
  await bundleController({ outfile });
  chmodSync(outfile, 0o644);
  return outfile;
}

/** A golden input (test/golden/inputs), parsed. */
export function goldenInput(file: string): BackupSchedule {
  return parse(readFileSync(new URL(`../golden/inputs/${file}`, import.meta.url), 'utf8')) as BackupSchedule;
}

/** Where the contract's mounts live on this machine. */
export interface Mounts {
  readonly destination: string;
  readonly source?: string;
  readonly etcdTls?: string;
  readonly tmp?: string;
}

/** The backup container's args and env of buildCronJob(schedule), mount paths replaced by `mounts`. */
export function containerCommand(schedule: BackupSchedule, mounts: Mounts): { args: string[]; env: Record<string, string> } {
  const container = buildCronJob(schedule).spec!.jobTemplate.spec!.template.spec!.containers[0]!;
  const map = (value: string): string => {
    for (const [mount, local] of [[DESTINATION_MOUNT_PATH, mounts.destination], [SOURCE_MOUNT_PATH, mounts.source], [ETCD_TLS_MOUNT_PATH, mounts.etcdTls], [TMP_MOUNT_PATH, mounts.tmp ?? tmpdir()]] as const) {
      if (local !== undefined && (value === mount || value.startsWith(`${mount}/`) || value.includes(`=${mount}`))) return value.replace(mount, local);
    }
    return value;
  };
  const env: Record<string, string> = {};
  for (const e of container.env ?? []) env[e.name] = map(e.value ?? '');
  return { args: (container.args ?? []).map(map), env };
}

/** What a finished runner process did. */
export interface RunnerResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** stdout lines that are JSON (the pino log). */
  readonly records: Record<string, unknown>[];
}

/** A started runner process. */
export interface RunnerHandle {
  readonly pid: number;
  readonly done: Promise<RunnerResult>;
  kill(signal: NodeJS.Signals): void;
}

/** How to start the runner process. */
export interface RunnerOptions extends Pick<SpawnOptions, 'uid' | 'gid'> {
  /**
   * RLIMIT_FSIZE in KiB, with SIGXFSZ ignored: a write past it fails with EFBIG, the way a full volume
   * refuses bytes (ENOSPC), without privileges to mount a small file system. @default none
   */
  readonly fileSizeLimitKiB?: number;
  /** Node/V8 flags after the image's (e.g. `--trace-gc`). @default none */
  readonly nodeFlags?: readonly string[];
}

/** Whether every user may reach and run `file` (o+x on each directory above it, o+rx on the file). */
function everyoneCanRun(file: string): boolean {
  if ((statSync(file).mode & 0o005) !== 0o005) return false;
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return false;
    if (dir === dirname(dir)) return true;
  }
}

let nodeForAnyUser: string | undefined;

/**
 * The Node binary for a runner started as another user (uid 65532): this one when every user can run
 * it, else a copy in a world-readable temp dir (a checkout under /root is closed to other users).
 */
function nodeBinaryFor(options: RunnerOptions): string {
  if (options.uid === undefined || everyoneCanRun(process.execPath)) return process.execPath;
  if (nodeForAnyUser === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'bks-node-'));
    chmodSync(dir, 0o755);
    nodeForAnyUser = join(dir, 'node');
    copyFileSync(process.execPath, nodeForAnyUser);
    chmodSync(nodeForAnyUser, 0o755);
  }
  return nodeForAnyUser;
}

/** Removes the copy {@link nodeBinaryFor} may have made (suites call it in afterAll). */
export function removeNodeCopy(): void {
  if (nodeForAnyUser !== undefined) rmSync(dirname(nodeForAnyUser), { recursive: true, force: true });
  nodeForAnyUser = undefined;
}

/** Runner processes started and not yet exited, for {@link killLeftoverRunners}. */
const running = new Set<ChildProcess>();

/**
 * SIGCONT + SIGKILL every runner a test started that is still alive (one frozen with SIGSTOP whose test
 * failed stays stopped otherwise) and waits for them to exit. Suites call it in afterEach.
 */
export async function killLeftoverRunners(): Promise<void> {
  const left = [...running];
  await Promise.all(
    left.map((child) => {
      const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
      child.kill('SIGCONT');
      child.kill('SIGKILL');
      return exited;
    }),
  );
}

/** Starts `node <image flags> <bundle> <args>` with only `env` (plus PATH) in its environment. */
export function startRunner(bundle: string, args: readonly string[], env: Record<string, string>, options: RunnerOptions = {}): RunnerHandle {
  const { fileSizeLimitKiB, nodeFlags = [], ...ids } = options;
  const argv = [...CONTROLLER_NODE_FLAGS, ...nodeFlags, bundle, ...args];
  // bash: `ulimit -f` counts 1024-byte blocks; an ignored signal stays ignored across exec.
  const node = nodeBinaryFor(options);
  const [file, fileArgs] = fileSizeLimitKiB === undefined ? [node, argv] : ['bash', ['-c', `trap '' XFSZ; ulimit -f ${fileSizeLimitKiB}; exec "$0" "$@"`, node, ...argv]];
  const child = spawn(file, fileArgs, { env: { PATH: process.env['PATH'] ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'], cwd: dirname(bundle), ...ids });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<RunnerResult>((resolve) =>
    child.once('close', (code) => {
      running.delete(child);
      const records = stdout.split('\n').flatMap((line) => {
        try {
          return line.startsWith('{') ? [JSON.parse(line) as Record<string, unknown>] : [];
        } catch {
          return [];
        }
      });
      resolve({ code, stdout, stderr, records });
    }),
  );
  return { pid: child.pid!, done, kill: (signal) => child.kill(signal) };
}

/** Runs the runner to the end. */
export function runRunner(bundle: string, args: readonly string[], env: Record<string, string>, options: RunnerOptions = {}): Promise<RunnerResult> {
  return startRunner(bundle, args, env, options).done;
}

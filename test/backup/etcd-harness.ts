/**
 * Real etcd for the backup tests: Debian's `etcd-server`/`etcd-client` (3.4) started on loopback with
 * TLS certificates the test makes (openssl), random free ports, temp data directories. Every process
 * started here is killed by {@link EtcdHarness.stopAll}, which the suites call in afterAll.
 *
 * Without etcd the suite fails (never skips) with a message saying how to install it; `.ci/run`
 * installs the packages when `etcd` is missing.
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Why etcd is needed and how to get it (the error when it is missing). */
export const ETCD_MISSING = 'the backup suite needs a real etcd 3.4 and etcdctl on PATH: `sudo apt-get install -y etcd-server etcd-client` (Debian/Ubuntu), or put etcd 3.4+ release binaries on PATH';

/** Throws {@link ETCD_MISSING} (CI or not: a missing etcd never turns into skipped tests). */
export function requireEtcd(): void {
  for (const tool of ['etcd', 'etcdctl', 'openssl']) {
    const found = spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;
    if (!found) throw new Error(`${tool} not found. ${tool === 'openssl' ? 'The suite makes its TLS certificates with openssl: `apt-get install -y openssl`' : ETCD_MISSING}`);
  }
}

/** A free TCP port on 127.0.0.1 (closed again; etcd binds it right after). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** etcd could not bind a port {@link freePort} picked: another process took it in between. */
class PortTakenError extends Error {
  constructor(stderr: string) {
    super(`etcd: address already in use\n${stderr}`);
    this.name = 'PortTakenError';
  }
}

/** Paths of a certificate set: a CA, a server certificate for 127.0.0.1, a client certificate. */
export interface Certs {
  readonly dir: string;
  readonly ca: string;
  readonly serverCert: string;
  readonly serverKey: string;
  readonly clientCert: string;
  readonly clientKey: string;
}

/** Makes a CA, a server cert (SAN IP 127.0.0.1, localhost) and a client cert with openssl. */
export async function makeCerts(dir: string, name = 'test'): Promise<Certs> {
  mkdirSync(dir, { recursive: true });
  const p = (f: string): string => join(dir, f);
  const ossl = (...args: string[]): Promise<unknown> => run('openssl', args, { cwd: dir });
  await ossl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', `/CN=${name}-ca`, '-keyout', p('ca.key'), '-out', p('ca.crt'));
  writeFileSync(p('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n');
  writeFileSync(p('client.ext'), 'extendedKeyUsage=clientAuth\n');
  for (const who of ['server', 'client']) {
    await ossl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', `/CN=${name}-${who}`, '-keyout', p(`${who}.key`), '-out', p(`${who}.csr`));
    await ossl('x509', '-req', '-in', p(`${who}.csr`), '-CA', p('ca.crt'), '-CAkey', p('ca.key'), '-CAcreateserial', '-days', '2', '-extfile', p(`${who}.ext`), '-out', p(`${who}.crt`));
  }
  return { dir, ca: p('ca.crt'), serverCert: p('server.crt'), serverKey: p('server.key'), clientCert: p('client.crt'), clientKey: p('client.key') };
}

/** A running etcd. */
export interface EtcdMember {
  readonly endpoint: string;
  readonly dataDir: string;
  readonly child: ChildProcess;
  /** Resolves when the process has exited. */
  readonly exited: Promise<void>;
}

/** Options of {@link EtcdHarness.start}. */
export interface StartOptions {
  /** Serve clients over TLS with client-certificate auth. @default plain http */
  readonly certs?: Certs;
  /** An existing data directory (a restored snapshot). @default a new temp dir */
  readonly dataDir?: string;
  /** Member name (must match a restored data dir's). @default 'default' */
  readonly name?: string;
  /** Peer port (must match a restored data dir's). @default a free port */
  readonly peerPort?: number;
  /** Backend quota in bytes. @default etcd's (2 GiB) */
  readonly quotaBytes?: number;
}

/** Starts etcd processes and cleans all of them up. */
export class EtcdHarness {
  readonly root = mkdtempSync(join(tmpdir(), 'bks-etcd-'));
  readonly #members: EtcdMember[] = [];
  readonly #pickPort: () => Promise<number>;

  /** `pickPort` picks each port etcd listens on. @default freePort */
  constructor(pickPort: () => Promise<number> = freePort) {
    this.#pickPort = pickPort;
  }

  /**
   * Starts etcd and waits until it serves clients. The ports come from {@link freePort}, which closes
   * them again: another process may bind one first, so an etcd that exits with "address already in
   * use" is started again on new ports (a few times).
   */
  async start(options: StartOptions = {}): Promise<EtcdMember> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#startOnce(options);
      } catch (err) {
        if (!(err instanceof PortTakenError) || attempt >= 5) throw err;
      }
    }
  }

  async #startOnce(options: StartOptions): Promise<EtcdMember> {
    const clientPort = await this.#pickPort();
    const peerPort = options.peerPort ?? (await this.#pickPort());
    const name = options.name ?? 'default';
    const dataDir = options.dataDir ?? mkdtempSync(join(this.root, 'data-'));
    const scheme = options.certs ? 'https' : 'http';
    const endpoint = `${scheme}://127.0.0.1:${clientPort}`;
    const peer = `http://127.0.0.1:${peerPort}`;
    const args = [
      `--name=${name}`, `--data-dir=${dataDir}`,
      `--listen-client-urls=${endpoint}`, `--advertise-client-urls=${endpoint}`,
      `--listen-peer-urls=${peer}`, `--initial-advertise-peer-urls=${peer}`, `--initial-cluster=${name}=${peer}`,
      '--log-level=error', '--logger=zap',
    ];
    if (options.quotaBytes) args.push(`--quota-backend-bytes=${options.quotaBytes}`);
    if (options.certs) args.push(`--cert-file=${options.certs.serverCert}`, `--key-file=${options.certs.serverKey}`, `--trusted-ca-file=${options.certs.ca}`, '--client-cert-auth');
    // etcd 3.4 refuses to start on arm64 and other "unsupported" arches unless told to.
    const env = { ...process.env, ...(process.arch === 'arm64' ? { ETCD_UNSUPPORTED_ARCH: 'arm64' } : {}) };
    const child = spawn('etcd', args, { stdio: ['ignore', 'ignore', 'pipe'], env });
    let stderr = '';
    child.stderr?.on('data', (c: Buffer) => {
      stderr = (stderr + c.toString()).slice(-4000);
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const member = { endpoint, dataDir, child, exited };
    this.#members.push(member);
    const deadline = Date.now() + 15_000;
    for (;;) {
      if (child.exitCode !== null) {
        await exited;
        if (/address already in use/.test(stderr)) {
          // A fresh data dir of ours may hold a half-initialized member: the retry gets a new one.
          if (options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
          throw new PortTakenError(stderr);
        }
        throw new Error(`etcd exited with ${child.exitCode}: ${stderr}`);
      }
      try {
        await this.etcdctl(member, options.certs, ['endpoint', 'health', '--command-timeout=1s']);
        return member;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`etcd at ${endpoint} did not become healthy: ${(err as Error).message}\n${stderr}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  /** Runs etcdctl (API v3) against a member; resolves with stdout. */
  async etcdctl(member: Pick<EtcdMember, 'endpoint'>, certs: Certs | undefined, args: readonly string[]): Promise<string> {
    const tls = certs ? [`--cacert=${certs.ca}`, `--cert=${certs.clientCert}`, `--key=${certs.clientKey}`] : [];
    const { stdout } = await run('etcdctl', [`--endpoints=${member.endpoint}`, ...tls, ...args], { env: { ...process.env, ETCDCTL_API: '3' }, maxBuffer: 256 << 20 });
    return stdout;
  }

  /** SIGKILLs a member (a crash mid-snapshot). */
  async kill(member: EtcdMember): Promise<void> {
    member.child.kill('SIGKILL');
    await member.exited;
  }

  /** Stops every member started here and removes the temp root. */
  async stopAll(): Promise<void> {
    for (const member of this.#members) if (member.child.exitCode === null && member.child.signalCode === null) member.child.kill('SIGKILL');
    await Promise.all(this.#members.map((m) => m.exited));
    rmSync(this.root, { recursive: true, force: true });
  }
}

/**
 * Writes `count` keys `<prefix><i>` with `valueBytes`-byte values through etcdctl's `txn` (`batch` puts
 * per transaction, at most 128 = etcd's default --max-txn-ops, and under its 1.5 MiB request limit),
 * several transactions at once.
 */
export async function writeKeys(harness: EtcdHarness, member: EtcdMember, certs: Certs | undefined, count: number, options: { prefix?: string; valueBytes?: number; parallel?: number; batch?: number } = {}): Promise<Map<string, string>> {
  const prefix = options.prefix ?? 'key/';
  const valueBytes = options.valueBytes ?? 32;
  const written = new Map<string, string>();
  const batches: string[][] = [];
  const size = options.batch ?? 128;
  for (let i = 0; i < count; i += size) {
    const batch: string[] = [];
    for (let j = i; j < Math.min(count, i + size); j++) {
      const key = `${prefix}${String(j).padStart(7, '0')}`;
      const value = `v${j}-`.padEnd(valueBytes, 'x');
      written.set(key, value);
      batch.push(`put ${key} ${value}`);
    }
    batches.push(batch);
  }
  const parallel = options.parallel ?? 4;
  const dir = mkdtempSync(join(harness.root, 'txn-'));
  let next = 0;
  await Promise.all(Array.from({ length: parallel }, async () => {
    while (next < batches.length) {
      const index = next++;
      // etcdctl txn reads: compares, blank line, success ops, blank line, failure ops, blank line.
      const file = join(dir, `${index}.txt`);
      writeFileSync(file, `\n${batches[index]!.join("\n")}\n\n\n`);
      const tls = certs ? `--cacert=${certs.ca} --cert=${certs.clientCert} --key=${certs.clientKey}` : '';
      await run('sh', ['-c', `ETCDCTL_API=3 etcdctl --endpoints=${member.endpoint} ${tls} txn < ${file}`]);
    }
  }));
  rmSync(dir, { recursive: true, force: true });
  return written;
}

/** Every key and value under `prefix`, via `etcdctl get --prefix -w json` (base64 decoded). */
export async function readKeys(harness: EtcdHarness, member: Pick<EtcdMember, 'endpoint'>, certs: Certs | undefined, prefix: string): Promise<Map<string, string>> {
  const out = await harness.etcdctl(member, certs, ['get', prefix, '--prefix', '-w', 'json']);
  const parsed = JSON.parse(out) as { kvs?: { key: string; value: string }[] };
  return new Map((parsed.kvs ?? []).map((kv) => [Buffer.from(kv.key, 'base64').toString(), Buffer.from(kv.value, 'base64').toString()]));
}

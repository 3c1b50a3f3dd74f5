/**
 * A real S3 server for the object-store tests: OpenStack Swift with its s3api middleware (Debian's
 * `swift-proxy`, `swift-account`, `swift-container`, `swift-object`, and `memcached`), one node on
 * 127.0.0.1, random free ports, state in a temp directory. Rings: one device, one replica, part
 * power 8 (Swift's own RingBuilder, through Debian's /usr/bin/python3, where Swift is installed). tempauth gives the access key `test:tester`,
 * secret `testing`. Every process started here is ended by {@link SwiftS3.stop} (suites call it in
 * afterAll); {@link SwiftS3.stopProxy}/{@link SwiftS3.startProxy} take the S3 endpoint down and back.
 *
 * Without Swift the suite fails (never skips), saying how to install it; `.ci/run` installs it.
 * Swift reads /etc/swift/swift.conf (a fixed path); the package ships it, and it is written here only
 * when missing (it needs `swift_hash_path_suffix`).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, ListBucketsCommand, S3Client } from '@aws-sdk/client-s3';
import { freePort } from './etcd-harness.ts';

/** The packages and how to get them (the error when one is missing). */
export const SWIFT_MISSING = 'the object-store suite needs OpenStack Swift with s3api and memcached: `sudo apt-get install -y --no-install-recommends swift-proxy swift-account swift-container swift-object memcached` (Debian/Ubuntu)';

/** tempauth's test account: S3 access key and secret. */
export const SWIFT_CREDENTIALS = { AWS_ACCESS_KEY_ID: 'test:tester', AWS_SECRET_ACCESS_KEY: 'testing' } as const;

/** Throws {@link SWIFT_MISSING} when a server binary is missing (CI or not: never a skip). */
export function requireSwift(): void {
  for (const tool of ['swift-proxy-server', 'swift-account-server', 'swift-container-server', 'swift-object-server', 'memcached', '/usr/bin/python3']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) throw new Error(`${tool} not found: ${SWIFT_MISSING}`);
  }
}

const SERVERS = ['account', 'container', 'object'] as const;

/** A running single-node Swift. */
export class SwiftS3 {
  readonly root: string;
  readonly #children = new Map<string, ChildProcess>();
  #ports: Record<(typeof SERVERS)[number] | 'proxy' | 'memcached', number> | undefined;

  constructor(root = mkdtempSync(join(process.env['BKS_TEST_TMP'] ?? tmpdir(), 'swift-'))) {
    this.root = root;
  }

  /** `http://127.0.0.1:<port>` of the S3 API. */
  get endpoint(): string {
    return `http://127.0.0.1:${this.#ports!.proxy}`;
  }

  /** A client of the server (path style, region us-east-1, the settings Swift's s3api needs). */
  client(maxAttempts = 3): S3Client {
    return new S3Client({ maxAttempts, endpoint: this.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: SWIFT_CREDENTIALS.AWS_ACCESS_KEY_ID, secretAccessKey: SWIFT_CREDENTIALS.AWS_SECRET_ACCESS_KEY }, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
  }

  /** Writes the configuration and rings, starts memcached and the servers, waits for a signed ListBuckets. */
  async start(): Promise<void> {
    requireSwift();
    if (!existsSync('/etc/swift/swift.conf')) {
      mkdirSync('/etc/swift', { recursive: true });
      writeFileSync('/etc/swift/swift.conf', '[swift-hash]\nswift_hash_path_suffix = bks-test\n[storage-policy:0]\nname = Policy-0\ndefault = yes\n');
    }
    const ports = { account: await freePort(), container: await freePort(), object: await freePort(), proxy: await freePort(), memcached: await freePort() };
    this.#ports = ports;
    const etc = join(this.root, 'etc');
    const data = join(this.root, 'data');
    mkdirSync(join(data, 'd1'), { recursive: true });
    mkdirSync(etc, { recursive: true });
    const ring = spawnSync('/usr/bin/python3', ['-c', RING_SCRIPT, etc, String(ports.object), String(ports.container), String(ports.account)], { encoding: 'utf8' });
    if (ring.status !== 0) throw new Error(`swift rings: ${ring.stderr}`);
    const common = `bind_ip = 127.0.0.1\nworkers = 0\nuser = ${process.env['USER'] ?? 'root'}\nswift_dir = ${etc}\nlog_level = WARNING\n`;
    for (const server of SERVERS) {
      writeFileSync(join(etc, `${server}-server.conf`), `[DEFAULT]\n${common}bind_port = ${ports[server]}\ndevices = ${data}\nmount_check = false\n[pipeline:main]\npipeline = ${server}-server\n[app:${server}-server]\nuse = egg:swift#${server}\n`);
    }
    const filters = ['catch_errors', 'gatekeeper', 'healthcheck', 'proxy_logging:proxy-logging', 'listing_formats', 'copy', 'slo', 'dlo'].map((f) => {
      const [egg, name] = f.includes(':') ? f.split(':') : [f, f];
      return `[filter:${name}]\nuse = egg:swift#${egg}\n`;
    });
    writeFileSync(
      join(etc, 'proxy-server.conf'),
      `[DEFAULT]\n${common}bind_port = ${ports.proxy}\n[pipeline:main]\npipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats s3api tempauth copy slo dlo proxy-logging proxy-server\n` +
        '[app:proxy-server]\nuse = egg:swift#proxy\naccount_autocreate = true\n[filter:s3api]\nuse = egg:swift#s3api\nlocation = us-east-1\n' +
        `[filter:tempauth]\nuse = egg:swift#tempauth\nuser_test_tester = testing .admin\n[filter:cache]\nuse = egg:swift#memcache\nmemcache_servers = 127.0.0.1:${ports.memcached}\n${filters.join('')}`,
    );
    this.#spawn('memcached', 'memcached', ['-l', '127.0.0.1', '-p', String(ports.memcached), '-U', '0', '-m', '64', ...(process.getuid?.() === 0 ? ['-u', 'root'] : [])]);
    for (const server of SERVERS) this.#spawn(server, `swift-${server}-server`, [join(etc, `${server}-server.conf`)]);
    // Nothing through the proxy before the backends listen: it error-limits a backend for 60 s after 10 refusals.
    const t0 = Date.now();
    for (const server of SERVERS) await waitFor(`swift-${server}-server`, () => fetch(`http://127.0.0.1:${ports[server]}/`).then(() => true, () => false));
    const t1 = Date.now();
    await this.startProxy();
    if (process.env['BKS_SWIFT_TIMING']) console.log(`swift: backends ${t1 - t0} ms, proxy ${Date.now() - t1} ms`);
  }

  /** Starts the proxy (the S3 endpoint) and waits until a signed ListBuckets answers. */
  async startProxy(): Promise<void> {
    this.#spawn('proxy', 'swift-proxy-server', [join(this.root, 'etc', 'proxy-server.conf')]);
    const client = this.client(1);
    try {
      await waitFor('a signed S3 ListBuckets', () => client.send(new ListBucketsCommand({})).then(() => true, () => false));
    } finally {
      client.destroy();
    }
  }

  /** Kills the proxy (SIGKILL: the endpoint goes down mid-request) and waits for it to exit. */
  async stopProxy(): Promise<void> {
    await this.#kill('proxy', 'SIGKILL');
  }

  /** Creates a bucket. */
  async createBucket(bucket: string): Promise<void> {
    const client = this.client();
    try {
      await client.send(new CreateBucketCommand({ Bucket: bucket }));
    } finally {
      client.destroy();
    }
  }

  /** Ends every process started here and removes the state. */
  async stop(): Promise<void> {
    await Promise.all([...this.#children.keys()].map((name) => this.#kill(name, 'SIGTERM')));
    rmSync(this.root, { recursive: true, force: true });
  }

  #spawn(name: string, command: string, args: readonly string[]): void {
    const log = join(this.root, `${name}.log`);
    const child = spawn('sh', ['-c', 'exec "$0" "$@" >>"$LOG" 2>&1', command, ...args], { env: { ...process.env, LOG: log }, stdio: 'ignore' });
    this.#children.set(name, child);
  }

  async #kill(name: string, signal: NodeJS.Signals): Promise<void> {
    const child = this.#children.get(name);
    if (!child) return;
    this.#children.delete(name);
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}

/** Polls `check` every 100 ms for up to 60 s. */
async function waitFor(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`swift: timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Builds the object, container and account rings: part power 8, one replica, one device d1. */
const RING_SCRIPT = `
import sys
from swift.common.ring import RingBuilder
etc = sys.argv[1]
for name, port in zip(('object', 'container', 'account'), sys.argv[2:]):
    rb = RingBuilder(8, 1, 1)
    rb.add_dev({'id': 0, 'region': 1, 'zone': 1, 'ip': '127.0.0.1', 'port': int(port), 'device': 'd1', 'weight': 1.0})
    rb.rebalance()
    rb.save(f'{etc}/{name}.builder')
    rb.get_ring().save(f'{etc}/{name}.ring.gz')
`;

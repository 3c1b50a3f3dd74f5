/**
 * The failures an object-store run meets, each against the real S3 server (Swift + s3api) and, where
 * the server cannot be made to fail on cue, through a fault-injecting proxy in front of it: wrong
 * credentials, a missing bucket, an endpoint that is down or dies mid-upload, TLS without the private
 * CA, clock skew, throttling, a part refused mid-way, SIGTERM mid-upload. Each ends with one clear
 * error line and exit 1 (throttling: retried, exit 0), and the bucket holds no object and no multipart
 * upload of the failed run.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ListMultipartUploadsCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { EtcdHarness, makeCerts, requireEtcd, writeKeys, type Certs, type EtcdMember } from './etcd-harness.ts';
import { buildRunnerBundle, killLeftoverRunners, runRunner, startRunner, type RunnerResult } from './runner-process.ts';
import { FaultProxy, type Fault, type ProxiedRequest } from './s3-fault-proxy.ts';
import { requireSwift, SWIFT_CREDENTIALS, SwiftS3 } from './s3-server.ts';

const BUCKET = 'faults';

describe('object-store failures', () => {
  const etcdHarness = new EtcdHarness();
  const swift = new SwiftS3();
  let bundle: string;
  let client: S3Client;
  let work: string;
  let volume: string;
  let certs: Certs;
  let etcd: EtcdMember;
  const proxies: FaultProxy[] = [];
  let prefixCount = 0;

  /** A proxy in front of Swift with `rule`. */
  async function proxy(rule: (req: ProxiedRequest, index: number) => Fault | undefined, tls?: Certs): Promise<FaultProxy> {
    const started = await FaultProxy.start({ target: swift.endpoint, ...(tls ? { tls: { cert: tls.serverCert, key: tls.serverKey } } : {}) });
    started.rule = (req) => rule(req, started.seen.length);
    proxies.push(started);
    return started;
  }
  const env = (extra: Record<string, string> = {}): Record<string, string> => ({ BACKUP_SCHEDULE_NAME: 'vol', TMPDIR: work, ...SWIFT_CREDENTIALS, ...extra });
  /** The args of a volume run to `endpoint` under a fresh prefix. */
  function volumeArgs(endpoint: string, extra: string[] = []): { args: string[]; prefix: string } {
    const prefix = `run-${++prefixCount}`;
    return { prefix, args: ['backup', '--source=pvc', `--source-dir=${volume}`, `--destination-url=s3://${BUCKET}/${prefix}`, `--s3-endpoint=${endpoint}`, '--s3-allow-http', '--s3-force-path-style', '--compression=none', '--keep-last=1', ...extra] };
  }
  /** The run failed with one error line matching `pattern`. */
  function expectFailure(result: RunnerResult, pattern: RegExp): void {
    expect(result.code, result.stdout + result.stderr).toBe(1);
    const errors = result.records.filter((r) => r['level'] === 'error');
    expect(errors, result.stdout + result.stderr).toHaveLength(1);
    expect(errors[0]!['msg']).toMatch(/^backup failed: /);
    expect(errors[0]!['msg']).toMatch(pattern);
    expect(result.stdout + result.stderr).not.toContain(SWIFT_CREDENTIALS.AWS_SECRET_ACCESS_KEY);
  }
  /** No object and no multipart upload under `prefix`. */
  async function expectNothingLeft(prefix: string): Promise<void> {
    const objects = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${prefix}/` }));
    expect((objects.Contents ?? []).map((o) => o.Key)).toEqual([]);
    const uploads = await client.send(new ListMultipartUploadsCommand({ Bucket: BUCKET, Prefix: `${prefix}/` }));
    expect((uploads.Uploads ?? []).map((u) => u.Key)).toEqual([]);
  }
  async function objectsUnder(prefix: string): Promise<string[]> {
    const objects = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${prefix}/` }));
    return (objects.Contents ?? []).map((o) => o.Key!);
  }

  beforeAll(async () => {
    requireSwift();
    requireEtcd();
    work = etcdHarness.root;
    [bundle, certs] = await Promise.all([buildRunnerBundle(), makeCerts(join(work, 'pki')), swift.start()]);
    client = swift.client();
    await swift.createBucket(BUCKET);
    // 20 MiB of incompressible data (and the tar headers): five parts of 5 MiB.
    volume = join(work, 'volume');
    mkdirSync(volume);
    for (let i = 0; i < 5; i++) writeFileSync(join(volume, `f${i}.bin`), randomBytes(4 << 20));
  }, 180_000);

  afterEach(async () => {
    await killLeftoverRunners();
    await Promise.all(proxies.splice(0).map((p) => p.stop()));
  });

  afterAll(async () => {
    client?.destroy();
    await Promise.all([swift.stop(), etcdHarness.stopAll()]);
    if (bundle) rmSync(dirname(bundle), { recursive: true, force: true });
  });

  it('wrong credentials (403): says which variables to check', async () => {
    const { args, prefix } = volumeArgs(swift.endpoint);
    const result = await runRunner(bundle, args, env({ AWS_SECRET_ACCESS_KEY: 'not-the-secret' }));
    expectFailure(result, /refused the credentials: check AWS_ACCESS_KEY_ID \/ AWS_SECRET_ACCESS_KEY .*HTTP 403/);
    expect(result.stdout).not.toContain('not-the-secret');
    await expectNothingLeft(prefix);
  });

  it('missing bucket: names it, never creates it', async () => {
    const { args } = volumeArgs(swift.endpoint);
    const result = await runRunner(bundle, args.map((a) => a.replace(`s3://${BUCKET}/`, 's3://no-such-bucket/')), env());
    expectFailure(result, /bucket no-such-bucket does not exist .*HTTP 404/);
  });

  it('endpoint down: cannot reach it', async () => {
    const down = await proxy(() => undefined);
    const endpoint = down.endpoint;
    await down.stop();
    proxies.pop();
    const result = await runRunner(bundle, volumeArgs(endpoint).args, env());
    expectFailure(result, new RegExp(`cannot reach ${endpoint.replaceAll('.', '\\.')}.*ECONNREFUSED`));
  });

  it('an http:// endpoint needs --s3-allow-http (usage error, exit 2)', async () => {
    const result = await runRunner(bundle, volumeArgs(swift.endpoint).args.filter((a) => a !== '--s3-allow-http'), env());
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--s3-endpoint: .* is plain http .*--s3-allow-http/);
  });

  it('TLS: an endpoint signed by a private CA fails without --s3-ca-file and works with it', async () => {
    const tls = await proxy(() => undefined, certs);
    const without = volumeArgs(tls.endpoint);
    expectFailure(await runRunner(bundle, without.args, env()), /TLS failure talking to https:.*--s3-ca-file/);
    await expectNothingLeft(without.prefix);
    const withCa = volumeArgs(tls.endpoint, [`--s3-ca-file=${certs.ca}`]);
    const result = await runRunner(bundle, withCa.args, env());
    expect(result.code, result.stdout).toBe(0);
    expect(await objectsUnder(withCa.prefix)).toHaveLength(2);
  });

  it('clock skew (RequestTimeTooSkewed): says to fix the node clock', async () => {
    const skewed = await proxy(() => ({ kind: 'error', status: 403, code: 'RequestTimeTooSkewed', message: 'The difference between the request time and the current time is too large.' }));
    const { args, prefix } = volumeArgs(skewed.endpoint);
    expectFailure(await runRunner(bundle, args, env()), /clock differs from the server's by more than 15 minutes.*RequestTimeTooSkewed, HTTP 403/);
    await expectNothingLeft(prefix);
  });

  it('throttling (503 SlowDown): parts are retried with backoff and the run succeeds', async () => {
    let throttled = 0;
    const slow = await proxy((req) => (req.isUploadPart && throttled++ < 3 ? { kind: 'error', status: 503, code: 'SlowDown', message: 'Please reduce your request rate.' } : undefined));
    const { args, prefix } = volumeArgs(slow.endpoint);
    const result = await runRunner(bundle, args, env());
    expect(result.code, result.stdout).toBe(0);
    expect(throttled).toBeGreaterThan(3);
    const parts = new Set(slow.seen.filter((r) => r.isUploadPart).map((r) => r.query.get('partNumber')));
    expect(parts.size).toBe(5);
    expect(slow.seen.filter((r) => r.isUploadPart).length).toBe(parts.size + 3);
    expect(await objectsUnder(prefix)).toHaveLength(2);
  });

  it('a part refused mid-way: the upload is aborted, nothing stays', async () => {
    const refusing = await proxy((req) => (req.isUploadPart && req.query.get('partNumber') === '2' ? { kind: 'error', status: 400, code: 'InvalidDigest', message: 'The Content-MD5 you specified was invalid.' } : undefined));
    const { args, prefix } = volumeArgs(refusing.endpoint);
    expectFailure(await runRunner(bundle, args, env()), /InvalidDigest, HTTP 400/);
    expect(refusing.seen.some((r) => r.method === 'DELETE' && r.query.has('uploadId'))).toBe(true);
    await expectNothingLeft(prefix);
  });

  it('an etcd snapshot whose upload fails mid-stream: the stream stops, the upload is aborted, no other endpoint is tried', async () => {
    etcd = await etcdHarness.start();
    // 20 MB of values, uploaded uncompressed: several parts.
    await writeKeys(etcdHarness, etcd, undefined, 2000, { valueBytes: 10_000, batch: 50 });
    const refusing = await proxy((req) => (req.isUploadPart && req.query.get('partNumber') === '2' ? { kind: 'error', status: 403, code: 'AccessDenied', message: 'Access Denied' } : undefined));
    const prefix = 'etcd-refused';
    const result = await runRunner(bundle, ['backup', '--source=etcd', `--etcd-endpoints=${etcd.endpoint},${etcd.endpoint}`, `--destination-url=s3://${BUCKET}/${prefix}`, `--s3-endpoint=${refusing.endpoint}`, '--s3-allow-http', '--s3-force-path-style', '--compression=none', '--keep-last=1'], env({ BACKUP_SCHEDULE_NAME: 'cluster' }));
    expectFailure(result, /access denied to bucket faults.*AccessDenied, HTTP 403/);
    expect(result.records.filter((r) => r['msg'] === 'etcd snapshot: streaming to the bucket')).toHaveLength(1);
    await expectNothingLeft(prefix);
  }, 60_000);

  it('SIGTERM mid-upload: the upload is aborted before the process exits', async () => {
    let runner: ReturnType<typeof startRunner> | undefined;
    const slow = await proxy((req) => {
      if (!req.isUploadPart) return undefined;
      if (req.query.get('partNumber') === '2') runner?.kill('SIGTERM');
      return { kind: 'delay', ms: 1500 };
    });
    const { args, prefix } = volumeArgs(slow.endpoint);
    runner = startRunner(bundle, args, env());
    const result = await runner.done;
    expectFailure(result, /aborted \(the Pod is being stopped\)/);
    expect(result.records.some((r) => r['msg'] === 'stopping: a backup still being written is abandoned and its temp file removed')).toBe(true);
    await expectNothingLeft(prefix);
  });

  it('the server killed mid-upload: the run fails; the next run aborts the stale upload and completes', async () => {
    let killed: Promise<void> | undefined;
    const dying = await proxy((req) => {
      if (req.isUploadPart && req.query.get('partNumber') === '2') killed ??= swift.stopProxy();
      return req.isUploadPart ? { kind: 'delay', ms: 1000 } : undefined;
    });
    const { args, prefix } = volumeArgs(dying.endpoint);
    const result = await runRunner(bundle, args, env());
    await killed;
    expectFailure(result, /cannot reach|socket hang up|ECONNRESET|ECONNREFUSED/);
    await swift.startProxy();
    expect(await objectsUnder(prefix)).toEqual([]);
    const stale = await client.send(new ListMultipartUploadsCommand({ Bucket: BUCKET, Prefix: `${prefix}/` }));
    expect(stale.Uploads ?? []).toHaveLength(1);
    const again = await runRunner(bundle, args.map((a) => (a.startsWith('--s3-endpoint=') ? `--s3-endpoint=${swift.endpoint}` : a)), env());
    expect(again.code, again.stdout).toBe(0);
    expect(again.records.some((r) => r['msg'] === 'aborted multipart uploads left by interrupted runs of this schedule')).toBe(true);
    expect(await objectsUnder(prefix)).toHaveLength(2);
    expect((await client.send(new ListMultipartUploadsCommand({ Bucket: BUCKET, Prefix: `${prefix}/` }))).Uploads ?? []).toEqual([]);
  }, 90_000);
});

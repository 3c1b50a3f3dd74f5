/**
 * The image as a registry serves it: Debian's docker-registry (the CNCF distribution server) on
 * loopback, the layout pushed with Debian's skopeo keeping its digests, the manifest served under the
 * tag with the digest the build printed, and the image pulled back by digest, blob for blob the same.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MEDIA_TYPES } from '../../scripts/image/oci-layout.ts';
import { freePort } from '../backup/etcd-harness.ts';
import { waitFor } from '../e2e/harness.ts';
import { sharedImage, type SharedImage } from './shared-image.ts';

const sh = promisify(execFile);
const REPOSITORY = 'kubelings/backupschedule-operator';

let image: SharedImage;
let registry: ChildProcess | undefined;
let host: string;
let work: string;

const skopeo = (...args: string[]): Promise<{ stdout: string }> => sh('skopeo', ['--insecure-policy', ...args], { timeout: 300_000, maxBuffer: 16 << 20 });
const sha256 = (bytes: Buffer): string => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

beforeAll(async () => {
  image = await sharedImage();
  work = mkdtempSync(join(process.env['BKS_TEST_TMP'] ?? '/tmp', 'bks-registry-'));
  host = `127.0.0.1:${await freePort()}`;
  const config = join(work, 'config.yml');
  writeFileSync(config, `version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: ${join(work, 'storage')}\nhttp:\n  addr: ${host}\n`);
  registry = spawn('docker-registry', ['serve', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  registry.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4000)));
  await waitFor(`docker-registry on ${host}`, () => {
    if (registry?.exitCode !== null) throw new Error(`docker-registry exited: ${stderr}`);
    return fetch(`http://${host}/v2/`).then((r) => r.ok, () => false);
  }, 30_000);
}, 15 * 60_000);

afterAll(async () => {
  registry?.kill('SIGTERM');
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the image in a registry', () => {
  it('is pushed with skopeo under its tag, served with the digest the build made, and pulled back by digest unchanged', async () => {
    const reference = `${host}/${REPOSITORY}`;
    await skopeo('copy', '--preserve-digests', '--dest-tls-verify=false', `oci:${image.layout}:${image.tag}`, `docker://${reference}:${image.tag}`);

    const served = await fetch(`http://${host}/v2/${REPOSITORY}/manifests/${image.tag}`, { headers: { accept: MEDIA_TYPES.manifest } });
    const body = Buffer.from(await served.arrayBuffer());
    expect(served.headers.get('content-type')).toBe(MEDIA_TYPES.manifest);
    expect(served.headers.get('docker-content-digest')).toBe(image.manifestDigest);
    expect(sha256(body)).toBe(image.manifestDigest);

    const inspected = JSON.parse((await skopeo('inspect', '--tls-verify=false', `docker://${reference}@${image.manifestDigest}`)).stdout) as { Digest: string; Labels: Record<string, string> };
    expect(inspected.Digest).toBe(image.manifestDigest);
    expect(inspected.Labels['org.opencontainers.image.version']).toBe(image.tag);

    const pulled = join(work, 'pulled');
    await skopeo('copy', '--src-tls-verify=false', `docker://${reference}@${image.manifestDigest}`, `oci:${pulled}:pulled`);
    const index = JSON.parse(readFileSync(join(pulled, 'index.json'), 'utf8')) as { manifests: { digest: string }[] };
    expect(index.manifests.map((m) => m.digest)).toEqual([image.manifestDigest]);
    const blobs = (layout: string): Map<string, Buffer> => new Map(readdirSync(join(layout, 'blobs', 'sha256')).map((f) => [f, readFileSync(join(layout, 'blobs', 'sha256', f))]));
    const original = blobs(image.layout);
    const back = blobs(pulled);
    expect([...back.keys()].sort()).toEqual([...original.keys()].sort());
    for (const [name, bytes] of back) expect(bytes.equals(original.get(name)!), name).toBe(true);
  }, 300_000);
});

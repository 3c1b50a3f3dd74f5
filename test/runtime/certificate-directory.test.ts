import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CertificateDirectory, type CertificateDirectoryOptions } from '../../src/runtime/certificate-directory.ts';
import { certificateLoadedCheck, type ServingCredentials } from '../../src/runtime/certificate-manager.ts';
import { FakeClock } from '../../src/runtime/clock.ts';
import { createCertificateAuthority, issueServingCertificate, readCertificate } from '../../src/runtime/tls-certificates.ts';
import { caAndServing, KubeletSecretVolume, tlsSecretFiles } from './kubelet-secret-volume.ts';

const WAIT = { timeout: 10_000, interval: 10 };
const POLL = 5_000;
const NAMES = ['hook.ops.svc'];

let root: string;
let first: Awaited<ReturnType<typeof caAndServing>>;
let second: Awaited<ReturnType<typeof caAndServing>>;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'cert-dir-'));
  [first, second] = await Promise.all([caAndServing(NAMES, 'first'), caAndServing(NAMES, 'second')]);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

let dirs = 0;
function source(overrides: Partial<CertificateDirectoryOptions> = {}) {
  const dir = join(root, `d${++dirs}`);
  const clock = new FakeClock(Date.now());
  const served: ServingCredentials[] = [];
  const warnings: string[] = [];
  const directory = new CertificateDirectory({
    dir,
    pollMs: POLL,
    clock,
    onCredentials: (c) => void served.push(c),
    logger: { info: () => {}, warn: (fields: object) => void warnings.push(String((fields as { problem: string }).problem)) },
    ...overrides,
  });
  return { dir, clock, served, warnings, directory, ready: certificateLoadedCheck(directory) };
}
/** A source on a kubelet-style volume already holding the first pair. */
function sourceOnVolume(overrides: Partial<CertificateDirectoryOptions> = {}) {
  const s = source(overrides);
  const volume = new KubeletSecretVolume(s.dir);
  volume.write(tlsSecretFiles(first));
  return { ...s, volume };
}
const fingerprint = (c: ServingCredentials | undefined): string | undefined => (c ? readCertificate(c.certPem).fingerprint256 : undefined);
const certFingerprint = (pair: typeof first): string => readCertificate(pair.serving.certPem).fingerprint256;

/** Steps the fake clock by one poll once the next poll is scheduled, and waits for that read to finish. */
async function nextPoll(s: ReturnType<typeof source>): Promise<void> {
  await vi.waitFor(() => expect(s.clock.pendingTimers).toBe(1), WAIT);
  s.clock.step(POLL);
  await s.directory.sync();
}

describe('CertificateDirectory', () => {
  it('loads plain files (no kubelet layout): the pair and ca.crt as the bundle; ready', async () => {
    const s = source();
    new KubeletSecretVolume(s.dir); // creates the directory only
    for (const [name, content] of Object.entries(tlsSecretFiles(first))) writeFileSync(join(s.dir, name), content);
    await s.directory.sync();
    expect(s.served).toEqual([{ certPem: first.serving.certPem, keyPem: first.serving.keyPem, caBundlePem: first.ca.certPem }]);
    expect(s.directory.credentials).toBe(s.served[0]);
    expect(s.ready.check()).toEqual({ ok: true });
    await s.directory.stop();
  });

  it('follows kubelet\'s ..data symlink swap at the next poll, and hands over nothing while the files are unchanged', async () => {
    const s = sourceOnVolume();
    const { volume } = s;
    s.directory.start();
    await vi.waitFor(() => expect(s.served).toHaveLength(1), WAIT);
    expect(fingerprint(s.served[0])).toBe(certFingerprint(first));
    await nextPoll(s);
    expect(s.served).toHaveLength(1);
    volume.write(tlsSecretFiles(second));
    expect(s.served).toHaveLength(1);
    await nextPoll(s);
    expect(s.served.map(fingerprint)).toEqual([certFingerprint(first), certFingerprint(second)]);
    expect(s.directory.credentials?.caBundlePem).toBe(second.ca.certPem);
    expect(s.warnings).toEqual([]);
    await s.directory.stop();
    expect(s.clock.pendingTimers).toBe(0);
  });

  it('is not ready while the directory is empty, warns once however often it polls, and loads the files once they appear', async () => {
    const s = source();
    s.directory.start();
    await vi.waitFor(() => expect(s.warnings).toHaveLength(1), WAIT);
    const check = await s.ready.check();
    expect(check.ok).toBe(false);
    expect(check.ok ? '' : check.reason).toMatch(new RegExp(`^no valid serving certificate loaded from ${s.dir} yet: cannot read tls.crt and tls.key`));
    await nextPoll(s);
    await nextPoll(s);
    expect(s.warnings).toHaveLength(1);
    new KubeletSecretVolume(s.dir).write(tlsSecretFiles(first));
    await nextPoll(s);
    expect(s.served).toHaveLength(1);
    expect(s.ready.check()).toEqual({ ok: true });
    await s.directory.stop();
  });

  it('keeps serving the previous pair when the key does not belong to the certificate (a writer caught mid-way), and loads the fixed pair', async () => {
    const s = sourceOnVolume();
    const { volume } = s;
    await s.directory.sync();
    volume.write({ ...tlsSecretFiles(second), 'tls.key': first.serving.keyPem });
    await s.directory.sync();
    expect(s.served).toHaveLength(1);
    expect(fingerprint(s.directory.credentials)).toBe(certFingerprint(first));
    expect(s.ready.check()).toEqual({ ok: true });
    expect(s.warnings).toEqual([expect.stringContaining('the private key does not belong to the certificate')]);
    volume.write(tlsSecretFiles(second));
    await s.directory.sync();
    expect(fingerprint(s.directory.credentials)).toBe(certFingerprint(second));
    // A good read of the pair already served ends the problem too: the same mistake later is reported again.
    volume.write({ ...tlsSecretFiles(first), 'tls.key': second.serving.keyPem });
    await s.directory.sync();
    volume.write(tlsSecretFiles(second));
    await s.directory.sync();
    volume.write({ ...tlsSecretFiles(first), 'tls.key': second.serving.keyPem });
    await s.directory.sync();
    expect(s.warnings).toHaveLength(3);
    expect(new Set(s.warnings).size).toBe(1);
    await s.directory.stop();
  });

  it('never loads an expired certificate, and stops being ready when the loaded one expires', async () => {
    const now = Date.now();
    const ca = await createCertificateAuthority({ commonName: 'short-ca', notBefore: now - 7_200_000, notAfter: now + 86_400_000 });
    const expired = await issueServingCertificate(ca, { commonName: 'x', dnsNames: NAMES, notBefore: now - 7_200_000, notAfter: now - 3_600_000 });
    const s = source();
    const volume = new KubeletSecretVolume(s.dir);
    volume.write({ 'tls.crt': expired.certPem, 'tls.key': expired.keyPem });
    await s.directory.sync();
    expect(s.served).toEqual([]);
    expect(s.warnings).toEqual([expect.stringMatching(/^tls\.crt expired at /)]);
    volume.write(tlsSecretFiles(first));
    await s.directory.sync();
    expect(s.served).toHaveLength(1);
    s.clock.step(2 * 86_400_000);
    expect(s.directory.credentials).toBeUndefined();
    const check = await s.ready.check();
    expect(check.ok ? '' : check.reason).toMatch(/^the serving certificate from .* expired at /);
    await s.directory.stop();
  });

  it('reports a pair the server refuses, and keeps what it served', async () => {
    let refuse = false;
    const served: ServingCredentials[] = [];
    const s = sourceOnVolume({
      onCredentials: (c) => {
        if (refuse) throw new Error('unsupported key');
        served.push(c);
      },
    });
    const { volume } = s;
    await s.directory.sync();
    refuse = true;
    volume.write(tlsSecretFiles(second));
    await s.directory.sync();
    expect(served.map(fingerprint)).toEqual([certFingerprint(first)]);
    expect(fingerprint(s.directory.credentials)).toBe(certFingerprint(first));
    expect(s.warnings).toEqual(['the server refused tls.crt/tls.key: unsupported key']);
    await s.directory.stop();
  });
});

import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CERTIFICATE_SECRET_KEYS as K, planCertificates, readCertificateState, renewCertificates, type CertificateState, type RotationPolicy } from '../../src/runtime/certificate-plan.ts';
import { isIssuedBy, readCertificate, splitPemBundle } from '../../src/runtime/tls-certificates.ts';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 1);
const policy: RotationPolicy = {
  commonName: 'hook',
  dnsNames: ['hook.ns.svc', 'hook.ns.svc.cluster.local'],
  caLifetimeMs: 300 * DAY,
  servingLifetimeMs: 30 * DAY,
  caOverlapMs: HOUR,
  backdateMs: HOUR,
};

/** Plans at `now` and, when something must change, writes what renewCertificates returns. */
async function syncAt(data: Record<string, string> | undefined, now: number, p: RotationPolicy = policy): Promise<{ data: Record<string, string>; reasons: readonly string[] }> {
  const plan = planCertificates(readCertificateState(data), now, p);
  if (plan.reasons.length === 0) return { data: data ?? {}, reasons: [] };
  return { data: await renewCertificates(readCertificateState(data), plan, now, p), reasons: plan.reasons };
}

const pem = (data: Record<string, string>, key: string): string => Buffer.from(data[key] ?? '', 'base64').toString('utf8');
const bundleOf = (data: Record<string, string>): string[] => splitPemBundle(pem(data, K.caBundle)).map((c) => readCertificate(c).fingerprint256);
const fp = (data: Record<string, string>, key: string): string => readCertificate(pem(data, key)).fingerprint256;
function usable(state: CertificateState): void {
  expect(state.problem).toBeUndefined();
  expect(state.servingProblem).toBeUndefined();
}

describe('planCertificates', () => {
  it('creates a CA and a serving certificate for the Service names when the Secret is empty, then has nothing to do', async () => {
    const { data, reasons } = await syncAt(undefined, T0);
    expect(reasons).toEqual(['no usable CA (ca.crt is missing)']);
    const state = readCertificateState(data);
    usable(state);
    expect(state.ca?.info.isCa).toBe(true);
    expect(state.serving?.info.dnsNames).toEqual(policy.dnsNames);
    expect(state.serving?.info.notBefore).toBe(T0 - HOUR);
    expect(state.serving?.info.notAfter).toBe(T0 + 30 * DAY);
    expect(isIssuedBy(pem(data, K.tlsCert), pem(data, K.caCert))).toBe(true);
    expect(bundleOf(data)).toEqual([fp(data, K.caCert)]);
    expect(new X509Certificate(pem(data, K.tlsCert)).checkHost('hook.ns.svc')).toBe('hook.ns.svc');
    const again = planCertificates(state, T0 + DAY, policy);
    expect(again.reasons).toEqual([]);
    // The serving certificate lives 30 days + 1 h backdated: renewed at 2/3 of that.
    expect(again.nextCheckAt).toBe(T0 - HOUR + (30 * DAY + HOUR) * (2 / 3));
  });

  it('renews the serving certificate at 2/3 of its lifetime, from the same CA, with the bundle unchanged', async () => {
    const first = (await syncAt(undefined, T0)).data;
    const renewAt = readCertificateState(first).serving!.info;
    const due = renewAt.notBefore + (renewAt.notAfter - renewAt.notBefore) * (2 / 3);
    expect((await syncAt(first, due - 1000)).reasons).toEqual([]);
    const { data, reasons } = await syncAt(first, due);
    expect(reasons).toEqual(['the serving certificate is past 67% of its lifetime']);
    expect(fp(data, K.caCert)).toBe(fp(first, K.caCert));
    expect(fp(data, K.tlsCert)).not.toBe(fp(first, K.tlsCert));
    expect(bundleOf(data)).toEqual(bundleOf(first));
  });

  it('rotates the CA with overlap: the next CA joins the bundle first, signs only after caOverlapMs, the old one stays trusted until it expires', async () => {
    const first = (await syncAt(undefined, T0)).data;
    const caInfo = readCertificateState(first).ca!.info;
    const caDue = caInfo.notBefore + (caInfo.notAfter - caInfo.notBefore) * (2 / 3);
    // Phase 1: a next CA, in the bundle before the current one's; the serving certificate is untouched.
    const added = await syncAt(first, caDue);
    expect(added.reasons).toContain('the CA is past 67% of its lifetime');
    expect(fp(added.data, K.caCert)).toBe(fp(first, K.caCert));
    expect(bundleOf(added.data)).toEqual([fp(added.data, K.nextCaCert), fp(first, K.caCert)]);
    const servingBefore = fp(added.data, K.tlsCert);
    // Within the overlap nothing changes.
    expect((await syncAt(added.data, caDue + HOUR - 1000)).reasons).toEqual([]);
    // Phase 2: promoted, a serving certificate from it; both CAs still trusted.
    const promoted = await syncAt(added.data, caDue + HOUR);
    expect(promoted.reasons).toEqual(['the next CA has been in the bundle long enough to sign', 'the CA that signs changed']);
    expect(fp(promoted.data, K.caCert)).toBe(fp(added.data, K.nextCaCert));
    expect(promoted.data[K.nextCaCert]).toBeUndefined();
    expect(fp(promoted.data, K.tlsCert)).not.toBe(servingBefore);
    expect(isIssuedBy(pem(promoted.data, K.tlsCert), pem(promoted.data, K.caCert))).toBe(true);
    expect(bundleOf(promoted.data)).toEqual([fp(promoted.data, K.caCert), fp(first, K.caCert)]);
    // The old CA leaves the bundle when it expires.
    const later = await syncAt(promoted.data, caInfo.notAfter);
    expect(later.reasons).toContain('ca-bundle.crt does not list exactly the CAs in use');
    expect(bundleOf(later.data)).toEqual([fp(promoted.data, K.caCert)]);
  });

  it.each([
    ['a serving key of another certificate', (d: Record<string, string>, other: Record<string, string>) => ({ ...d, [K.tlsKey]: other[K.tlsKey]! }), 'no usable serving certificate (tls.crt: the private key does not belong to the certificate)'],
    ['a serving certificate of another CA', (d: Record<string, string>, other: Record<string, string>) => ({ ...d, [K.tlsCert]: other[K.tlsCert]!, [K.tlsKey]: other[K.tlsKey]! }), 'the serving certificate was not issued by the CA'],
    ['no serving certificate', (d: Record<string, string>) => ({ ...d, [K.tlsCert]: '' }), 'no usable serving certificate (tls.crt is missing)'],
  ])('reissues the serving certificate from the same CA given %s', async (_, corrupt, reason) => {
    const good = (await syncAt(undefined, T0)).data;
    const other = (await syncAt(undefined, T0)).data;
    const { data, reasons } = await syncAt(corrupt(good, other), T0 + DAY);
    expect(reasons).toEqual([reason]);
    expect(fp(data, K.caCert)).toBe(fp(good, K.caCert));
    expect(isIssuedBy(pem(data, K.tlsCert), pem(data, K.caCert))).toBe(true);
  });

  it('reissues the serving certificate when the Service names change', async () => {
    const good = (await syncAt(undefined, T0)).data;
    const renamed = { ...policy, dnsNames: ['other.ns.svc'] };
    const { data, reasons } = await syncAt(good, T0 + DAY, renamed);
    expect(reasons).toEqual(['the serving certificate names hook.ns.svc, hook.ns.svc.cluster.local, not other.ns.svc']);
    expect(readCertificate(pem(data, K.tlsCert)).dnsNames).toEqual(['other.ns.svc']);
  });

  it('starts over with a new CA when the CA is not usable', async () => {
    const good = (await syncAt(undefined, T0)).data;
    expect((await syncAt({ ...good, [K.caKey]: good[K.tlsKey]! }, T0)).reasons).toEqual(['no usable CA (ca.crt: the private key does not belong to the certificate)']);
    expect((await syncAt({ ...good, [K.caCert]: good[K.tlsCert]!, [K.caKey]: good[K.tlsKey]! }, T0)).reasons).toEqual(['no usable CA (ca.crt is not a CA certificate)']);
    expect((await syncAt({ ...good, [K.caCert]: Buffer.from('junk').toString('base64') }, T0)).reasons[0]).toMatch(/^no usable CA \(ca\.crt: not a PEM certificate/);
    expect((await syncAt(good, T0 + 300 * DAY)).reasons).toEqual([`the CA expired at ${new Date(T0 + 300 * DAY).toISOString()}`]);
  });
});

import { X509Certificate } from 'node:crypto';
import forge from 'node-forge';
import { beforeAll, describe, expect, it } from 'vitest';
import { CertificateError, checkKeyMatches, createCertificateAuthority, isIssuedBy, issueServingCertificate, readCertificate, splitPemBundle, type CertificateAndKey } from '../../src/runtime/tls-certificates.ts';
import { goX509NameProblem } from '../../src/runtime/x509-names.ts';

const T0 = Date.UTC(2026, 0, 1);
const DAY = 86_400_000;
let ca: CertificateAndKey;
let serving: CertificateAndKey;

beforeAll(async () => {
  ca = await createCertificateAuthority({ commonName: 'hook-ca@1', notBefore: T0, notAfter: T0 + 10 * DAY });
  serving = await issueServingCertificate(ca, { commonName: 'hook', dnsNames: ['hook.ns.svc', 'hook.ns.svc.cluster.local'], notBefore: T0, notAfter: T0 + DAY });
});

describe('tls-certificates', () => {
  it('creates a CA that may sign leaf certificates only, with PEM lines ending in \\n', () => {
    const cert = forge.pki.certificateFromPem(ca.certPem);
    expect(cert.getExtension('basicConstraints')).toMatchObject({ cA: true, pathLenConstraint: 0, critical: true });
    expect(cert.getExtension('keyUsage')).toMatchObject({ keyCertSign: true, cRLSign: true, critical: true });
    expect(ca.certPem).not.toContain('\r');
    expect(readCertificate(ca.certPem)).toMatchObject({ subject: 'CN=hook-ca@1', issuer: 'CN=hook-ca@1', isCa: true, notBefore: T0, notAfter: T0 + 10 * DAY });
    expect(new X509Certificate(ca.certPem).verify(new X509Certificate(ca.certPem).publicKey)).toBe(true);
  });

  it('issues a server certificate: not a CA, serverAuth, the DNS names as subject alternative names, a positive serial of at most 20 octets', () => {
    const cert = forge.pki.certificateFromPem(serving.certPem);
    expect(cert.getExtension('basicConstraints')).toMatchObject({ cA: false });
    expect(cert.getExtension('extKeyUsage')).toMatchObject({ serverAuth: true });
    const info = readCertificate(serving.certPem);
    expect(info).toMatchObject({ subject: 'CN=hook', issuer: 'CN=hook-ca@1', isCa: false, dnsNames: ['hook.ns.svc', 'hook.ns.svc.cluster.local'] });
    const serial = new X509Certificate(serving.certPem).serialNumber;
    expect(serial.length).toBeLessThanOrEqual(40);
    expect(Number.parseInt(serial.slice(0, 2), 16)).toBeLessThan(0x80);
    expect(isIssuedBy(serving.certPem, ca.certPem)).toBe(true);
    expect(isIssuedBy(ca.certPem, serving.certPem)).toBe(false);
    checkKeyMatches(serving);
  });

  it.each([
    ['notAfter before notBefore', () => createCertificateAuthority({ commonName: 'x', notBefore: T0, notAfter: T0 }), 'certificate authority: notAfter (2026-01-01T00:00:00.000Z) must be after notBefore (2026-01-01T00:00:00.000Z)'],
    ['no DNS names', () => issueServingCertificate(ca, { commonName: 'x', dnsNames: [], notBefore: T0, notAfter: T0 + 1 }), 'serving certificate: dnsNames must not be empty'],
  ])('refuses a request with %s', async (_, make, message) => {
    await expect(make()).rejects.toThrow(message);
  });

  // Go's x509 (kube-apiserver calling the webhook) refuses a certificate with a PrintableString holding
  // a character outside that set ('@' in the CA's name): found on a real kube-apiserver, not by OpenSSL.
  it("encodes every name so Go's x509 parses it: UTF8String, or PrintableString within its character set", () => {
    expect(readCertificate(ca.certPem).subject).toBe('CN=hook-ca@1');
    expect([goX509NameProblem(ca.certPem), goX509NameProblem(serving.certPem)]).toEqual([undefined, undefined]);
  });

  it('names the problem of a certificate that is not one, or a key of another certificate', () => {
    expect(() => readCertificate('junk', 'tls.crt')).toThrow(CertificateError);
    expect(() => readCertificate('junk', 'tls.crt')).toThrow(/^tls\.crt: not a PEM certificate/);
    expect(() => checkKeyMatches({ certPem: serving.certPem, keyPem: ca.keyPem }, 'tls.crt')).toThrow('tls.crt: the private key does not belong to the certificate');
    expect(() => checkKeyMatches({ certPem: serving.certPem, keyPem: 'junk' }, 'tls.crt')).toThrow(/^tls\.crt: the private key is not a PEM key/);
  });

  it('splits a bundle into its certificates', () => {
    expect(splitPemBundle(`${serving.certPem}${ca.certPem}`)).toEqual([serving.certPem, ca.certPem]);
    expect(splitPemBundle('')).toEqual([]);
  });
});

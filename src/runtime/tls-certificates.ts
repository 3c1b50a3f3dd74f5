/**
 * A self-signed certificate authority and the serving certificates it issues, as PEM. Node's crypto
 * parses and checks certificates (`X509Certificate`) but cannot sign one, so the certificate itself is
 * built and signed by node-forge; the RSA keys come from Node's native, non-blocking `generateKeyPair`.
 * RSA 2048 because every TLS client (kube-apiserver's Go TLS above all) accepts it: about 30 ms for a
 * key and 40 ms for a signature here, once a rotation.
 */
import { createPrivateKey, generateKeyPair, randomBytes, X509Certificate } from 'node:crypto';
import { promisify } from 'node:util';
import forge from 'node-forge';

/** A certificate and its private key, PEM-encoded (PKCS#8 key). */
export interface CertificateAndKey {
  readonly certPem: string;
  readonly keyPem: string;
}

/** What to put in a certificate. Times are milliseconds since the epoch. */
export interface CertificateRequest {
  readonly commonName: string;
  readonly notBefore: number;
  readonly notAfter: number;
}

/** A serving certificate request: also the DNS names clients will connect to. */
export interface ServingCertificateRequest extends CertificateRequest {
  /** Subject alternative names (Go's TLS ignores the common name). */
  readonly dnsNames: readonly string[];
}

/** What {@link readCertificate} learns from a PEM certificate. */
export interface CertificateInfo {
  readonly subject: string;
  readonly issuer: string;
  readonly notBefore: number;
  readonly notAfter: number;
  readonly isCa: boolean;
  /** DNS subject alternative names, in order. */
  readonly dnsNames: readonly string[];
  readonly fingerprint256: string;
}

/** A PEM that is not a certificate, or a key that does not belong to it; the message says which. */
export class CertificateError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CertificateError';
  }
}

const generateRsaKeyPair = promisify(generateKeyPair);

async function newKeyPair(): Promise<{ keyPem: string; privateKey: forge.pki.rsa.PrivateKey; publicKey: forge.pki.rsa.PublicKey }> {
  const { privateKey: keyPem } = await generateRsaKeyPair('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const privateKey = forge.pki.privateKeyFromPem(keyPem) as forge.pki.rsa.PrivateKey;
  return { keyPem, privateKey, publicKey: forge.pki.rsa.setPublicKey(privateKey.n, privateKey.e) };
}

/** A positive 128-bit serial number (RFC 5280: positive, at most 20 octets, unpredictable). */
function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return bytes.toString('hex');
}

function checkTimes(what: string, request: CertificateRequest): void {
  if (!(request.notAfter > request.notBefore)) {
    throw new RangeError(`${what}: notAfter (${new Date(request.notAfter).toISOString()}) must be after notBefore (${new Date(request.notBefore).toISOString()})`);
  }
}

function newCertificate(request: CertificateRequest, publicKey: forge.pki.rsa.PublicKey): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = serialNumber();
  // X.509 times have second precision; keep what the certificate will say.
  cert.validity.notBefore = new Date(Math.floor(request.notBefore / 1000) * 1000);
  cert.validity.notAfter = new Date(Math.floor(request.notAfter / 1000) * 1000);
  // A UTF8String, not forge's default PrintableString: the CA's name carries an `@` (as client-go's
  // self-signed CAs do), which PrintableString does not allow, and Go's x509 (kube-apiserver calling
  // the webhook) refuses the whole chain then ("invalid PrintableString"); OpenSSL does not mind.
  // (@types/node-forge types valueTagClass as an ASN.1 class; forge uses it as the value's type tag.)
  cert.setSubject([{ name: 'commonName', value: request.commonName, valueTagClass: forge.asn1.Type.UTF8 as unknown as forge.asn1.Class }]);
  return cert;
}

/** PEM with `\n` line ends (forge writes `\r\n`), so bundles concatenate and compare as text. */
const toPem = (cert: forge.pki.Certificate): string => forge.pki.certificateToPem(cert).replace(/\r\n/g, '\n');

/** Creates a self-signed CA (basicConstraints CA, path length 0: it signs leaf certificates only). */
export async function createCertificateAuthority(request: CertificateRequest): Promise<CertificateAndKey> {
  checkTimes('certificate authority', request);
  const { keyPem, privateKey, publicKey } = await newKeyPair();
  const cert = newCertificate(request, publicKey);
  cert.setIssuer(cert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(privateKey, forge.md.sha256.create());
  return { certPem: toPem(cert), keyPem };
}

/** Issues a TLS server certificate for `dnsNames`, signed by `ca`. */
export async function issueServingCertificate(ca: CertificateAndKey, request: ServingCertificateRequest): Promise<CertificateAndKey> {
  checkTimes('serving certificate', request);
  if (request.dnsNames.length === 0) throw new RangeError('serving certificate: dnsNames must not be empty');
  const caCert = forge.pki.certificateFromPem(ca.certPem);
  const caKey = forge.pki.privateKeyFromPem(ca.keyPem) as forge.pki.rsa.PrivateKey;
  const { keyPem, publicKey } = await newKeyPair();
  const cert = newCertificate(request, publicKey);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: request.dnsNames.map((value) => ({ type: 2, value })) },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(caKey, forge.md.sha256.create());
  return { certPem: toPem(cert), keyPem };
}

function parse(pem: string, what: string): X509Certificate {
  try {
    return new X509Certificate(pem);
  } catch (err) {
    throw new CertificateError(`${what}: not a PEM certificate (${(err as Error).message})`, { cause: err });
  }
}

/** Reads a PEM certificate. Throws {@link CertificateError} naming `what` when it is not one. */
export function readCertificate(pem: string, what = 'certificate'): CertificateInfo {
  const cert = parse(pem, what);
  const dnsNames = (cert.subjectAltName ?? '')
    .split(', ')
    .filter((entry) => entry.startsWith('DNS:'))
    .map((entry) => entry.slice(4));
  return {
    subject: cert.subject,
    issuer: cert.issuer,
    notBefore: Date.parse(cert.validFrom),
    notAfter: Date.parse(cert.validTo),
    isCa: cert.ca,
    dnsNames,
    fingerprint256: cert.fingerprint256,
  };
}

/** Throws {@link CertificateError} unless `keyPem` is the private key of `certPem`. */
export function checkKeyMatches(pair: CertificateAndKey, what = 'certificate'): void {
  let matches: boolean;
  try {
    matches = parse(pair.certPem, what).checkPrivateKey(createPrivateKey(pair.keyPem));
  } catch (err) {
    if (err instanceof CertificateError) throw err;
    throw new CertificateError(`${what}: the private key is not a PEM key (${(err as Error).message})`, { cause: err });
  }
  if (!matches) throw new CertificateError(`${what}: the private key does not belong to the certificate`);
}

/** Whether `certPem` was signed by the CA `caPem` (signature and issuer name). */
export function isIssuedBy(certPem: string, caPem: string): boolean {
  const cert = parse(certPem, 'certificate');
  const ca = parse(caPem, 'certificate authority');
  return cert.checkIssued(ca) && cert.verify(ca.publicKey);
}

/** The certificates of a PEM bundle, each as its own PEM block. */
export function splitPemBundle(bundle: string): string[] {
  return bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g)?.map((pem) => `${pem}\n`) ?? [];
}

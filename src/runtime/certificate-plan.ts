/**
 * When the webhook's certificates in their one Secret must change, decided by a pure function of the
 * Secret's contents and the time, and the renewal that carries the decision out.
 *
 * The serving certificate is renewed at `renewFraction` (2/3) of its lifetime. The CA lives much longer
 * and is rotated with overlap, because clients trust it through a CA bundle published elsewhere (a
 * CRD's `caBundle`) that is updated after the Secret: at 2/3 of its life a *next* CA is created and
 * added to the bundle while the current one keeps signing; only `caOverlapMs` later is it promoted and
 * a serving certificate issued from it. Every CA stays in the bundle until it expires, so a replica
 * still serving a certificate of the previous CA is trusted until it reloads.
 */
import {
  checkKeyMatches,
  createCertificateAuthority,
  isIssuedBy,
  issueServingCertificate,
  readCertificate,
  splitPemBundle,
  type CertificateAndKey,
  type CertificateInfo,
} from './tls-certificates.ts';
import { goX509NameProblem } from './x509-names.ts';

/** The keys of the certificate Secret's `data`. */
export const CERTIFICATE_SECRET_KEYS = {
  caCert: 'ca.crt',
  caKey: 'ca.key',
  nextCaCert: 'next-ca.crt',
  nextCaKey: 'next-ca.key',
  caBundle: 'ca-bundle.crt',
  tlsCert: 'tls.crt',
  tlsKey: 'tls.key',
} as const;

const DAY_MS = 86_400_000;

/** How long certificates live and when they are renewed. */
export interface RotationPolicy {
  /** Subject common name of the CAs (a timestamp is appended) and of the serving certificate. */
  readonly commonName: string;
  /** DNS names the serving certificate is valid for. */
  readonly dnsNames: readonly string[];
  /** @default 10 years */
  readonly caLifetimeMs?: number;
  /** @default 1 year */
  readonly servingLifetimeMs?: number;
  /** Fraction of a certificate's lifetime after which it is renewed. @default 2/3 */
  readonly renewFraction?: number;
  /** How long a next CA is in the bundle before it signs (time for the bundle to reach every client). @default 1 hour */
  readonly caOverlapMs?: number;
  /** notBefore is set this far in the past, for clients whose clocks lag. @default 1 hour */
  readonly backdateMs?: number;
}

/** A certificate, its key and what it says. */
export interface ParsedCertificate extends CertificateAndKey {
  readonly info: CertificateInfo;
}

/** What the Secret holds, checked. */
export interface CertificateState {
  /** The signing CA; undefined with `problem` when the Secret has none usable. */
  readonly ca?: ParsedCertificate;
  readonly problem?: string;
  /** The CA waiting to sign, while the bundle spreads. */
  readonly nextCa?: ParsedCertificate;
  /** The trusted CAs, as published. */
  readonly bundle: readonly { readonly pem: string; readonly info: CertificateInfo }[];
  /** The serving certificate, when present and matching its key. */
  readonly serving?: ParsedCertificate;
  readonly servingProblem?: string;
}

/** What must change, and when to look again if nothing does. */
export interface CertificatePlan {
  /** Why the Secret must be written; empty when it is current. */
  readonly reasons: readonly string[];
  /** Create a new CA (and everything else): there is no usable one. */
  readonly freshCa: boolean;
  readonly addNextCa: boolean;
  readonly promoteNextCa: boolean;
  readonly issueServing: boolean;
  /** The existing CA certificates the bundle keeps, in order (new ones are put first). */
  readonly keepInBundle: readonly string[];
  /** When the Secret must be looked at again (ms since the epoch). */
  readonly nextCheckAt: number;
}

const decode = (data: Readonly<Record<string, string>>, key: string): string | undefined => {
  const value = data[key];
  return value === undefined || value === '' ? undefined : Buffer.from(value, 'base64').toString('utf8');
};

function parsePair(data: Readonly<Record<string, string>>, certKey: string, keyKey: string): ParsedCertificate | string {
  const certPem = decode(data, certKey);
  const keyPem = decode(data, keyKey);
  if (!certPem || !keyPem) return `${!certPem ? certKey : keyKey} is missing`;
  try {
    checkKeyMatches({ certPem, keyPem }, certKey);
    const info = readCertificate(certPem, certKey);
    // Node reads what kube-apiserver cannot (0.2.0's CA): such a certificate is as good as none.
    const unreadable = goX509NameProblem(certPem);
    return unreadable ? `${certKey}: ${unreadable}` : { certPem, keyPem, info };
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * Reads the Secret's `data` (base64 values, as the API returns them); never throws. A certificate whose
 * names Go's x509 cannot parse is unusable (kube-apiserver refuses it) and left out of the bundle.
 */
export function readCertificateState(data: Readonly<Record<string, string>> | undefined): CertificateState {
  const d = data ?? {};
  const bundle = splitPemBundle(decode(d, CERTIFICATE_SECRET_KEYS.caBundle) ?? '').flatMap((pem) => {
    try {
      return goX509NameProblem(pem) ? [] : [{ pem, info: readCertificate(pem) }];
    } catch {
      return [];
    }
  });
  const ca = parsePair(d, CERTIFICATE_SECRET_KEYS.caCert, CERTIFICATE_SECRET_KEYS.caKey);
  if (typeof ca === 'string') return { problem: ca, bundle };
  if (!ca.info.isCa) return { problem: `${CERTIFICATE_SECRET_KEYS.caCert} is not a CA certificate`, bundle };
  const next = d[CERTIFICATE_SECRET_KEYS.nextCaCert] ? parsePair(d, CERTIFICATE_SECRET_KEYS.nextCaCert, CERTIFICATE_SECRET_KEYS.nextCaKey) : undefined;
  const serving = parsePair(d, CERTIFICATE_SECRET_KEYS.tlsCert, CERTIFICATE_SECRET_KEYS.tlsKey);
  return {
    ca,
    bundle,
    ...(next && typeof next !== 'string' && next.info.isCa ? { nextCa: next } : {}),
    ...(typeof serving === 'string' ? { servingProblem: serving } : { serving }),
  };
}

/** Fills in the policy's defaults. */
export function rotationDefaults(policy: RotationPolicy): Required<RotationPolicy> {
  return {
    commonName: policy.commonName,
    dnsNames: policy.dnsNames,
    caLifetimeMs: policy.caLifetimeMs ?? 3650 * DAY_MS,
    servingLifetimeMs: policy.servingLifetimeMs ?? 365 * DAY_MS,
    renewFraction: policy.renewFraction ?? 2 / 3,
    caOverlapMs: policy.caOverlapMs ?? 3_600_000,
    backdateMs: policy.backdateMs ?? 3_600_000,
  };
}

const renewAt = (info: CertificateInfo, fraction: number): number => info.notBefore + (info.notAfter - info.notBefore) * fraction;
const sameNames = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && [...a].sort().every((n, i) => n === [...b].sort()[i]);

/** Decides what to change in the Secret at `now`. Pure. */
export function planCertificates(state: CertificateState, now: number, policyIn: RotationPolicy): CertificatePlan {
  const policy = rotationDefaults(policyIn);
  const { ca, nextCa, serving } = state;
  if (!ca || now >= ca.info.notAfter) {
    const why = ca ? `the CA expired at ${new Date(ca.info.notAfter).toISOString()}` : `no usable CA (${state.problem ?? 'missing'})`;
    return { reasons: [why], freshCa: true, addNextCa: false, promoteNextCa: false, issueServing: true, keepInBundle: [], nextCheckAt: now };
  }
  const reasons: string[] = [];
  let promoteNextCa = false;
  let addNextCa = false;
  let caCheckAt: number;
  if (nextCa) {
    const promoteAt = nextCa.info.notBefore + policy.backdateMs + policy.caOverlapMs;
    promoteNextCa = now >= promoteAt;
    if (promoteNextCa) reasons.push('the next CA has been in the bundle long enough to sign');
    caCheckAt = promoteAt;
  } else {
    caCheckAt = renewAt(ca.info, policy.renewFraction);
    addNextCa = now >= caCheckAt;
    if (addNextCa) reasons.push(`the CA is past ${Math.round(policy.renewFraction * 100)}% of its lifetime`);
  }
  const signing = promoteNextCa && nextCa ? nextCa : ca;
  let servingWhy: string | undefined;
  if (!serving) servingWhy = `no usable serving certificate (${state.servingProblem ?? 'missing'})`;
  else if (promoteNextCa) servingWhy = 'the CA that signs changed';
  else if (now >= renewAt(serving.info, policy.renewFraction)) servingWhy = `the serving certificate is past ${Math.round(policy.renewFraction * 100)}% of its lifetime`;
  else if (!sameNames(serving.info.dnsNames, policy.dnsNames)) servingWhy = `the serving certificate names ${serving.info.dnsNames.join(', ')}, not ${policy.dnsNames.join(', ')}`;
  else if (!isIssuedBy(serving.certPem, signing.certPem)) servingWhy = 'the serving certificate was not issued by the CA';
  if (servingWhy) reasons.push(servingWhy);

  // The bundle: the signing CA, the next CA while it waits, and every other CA it held until it expires.
  const keep = [signing.certPem, ...(nextCa && !promoteNextCa ? [nextCa.certPem] : []), ...(signing !== ca ? [ca.certPem] : [])];
  const fingerprints = new Set([signing, nextCa, ca].filter((c) => c !== undefined).map((c) => c.info.fingerprint256));
  const others = state.bundle.filter((c) => !fingerprints.has(c.info.fingerprint256) && c.info.notAfter > now);
  const keepInBundle = [...keep, ...others.map((c) => c.pem)];
  const current = state.bundle.map((c) => c.info.fingerprint256);
  const wanted = [...new Set(keepInBundle.map((pem) => readCertificate(pem).fingerprint256))];
  if (!addNextCa && (current.length !== wanted.length || !wanted.every((f) => current.includes(f)))) reasons.push(`${CERTIFICATE_SECRET_KEYS.caBundle} does not list exactly the CAs in use`);

  const expiries = state.bundle.filter((c) => c.info.notAfter > now).map((c) => c.info.notAfter);
  const nextCheckAt = Math.min(caCheckAt, serving ? renewAt(serving.info, policy.renewFraction) : now, ...expiries);
  return { reasons, freshCa: false, addNextCa, promoteNextCa, issueServing: servingWhy !== undefined, keepInBundle, nextCheckAt };
}

/** The Secret contents after carrying out `plan`: base64 `data`, every key of {@link CERTIFICATE_SECRET_KEYS} that applies. */
export async function renewCertificates(state: CertificateState, plan: CertificatePlan, now: number, policyIn: RotationPolicy): Promise<Record<string, string>> {
  const policy = rotationDefaults(policyIn);
  const notBefore = now - policy.backdateMs;
  const newCa = (): Promise<CertificateAndKey> =>
    createCertificateAuthority({ commonName: `${policy.commonName}-ca@${Math.floor(now / 1000)}`, notBefore, notAfter: now + policy.caLifetimeMs });
  let ca: CertificateAndKey | undefined = state.ca;
  let nextCa: CertificateAndKey | undefined = state.nextCa;
  const added: string[] = [];
  if (plan.freshCa || !ca) {
    ca = await newCa();
    nextCa = undefined;
    added.push(ca.certPem);
  } else if (plan.addNextCa) {
    nextCa = await newCa();
    added.push(nextCa.certPem);
  } else if (plan.promoteNextCa && nextCa) {
    ca = nextCa;
    nextCa = undefined;
  }
  let serving: CertificateAndKey | undefined = state.serving;
  if (plan.issueServing || !serving) {
    const caNotAfter = readCertificate(ca.certPem).notAfter;
    serving = await issueServingCertificate(ca, {
      commonName: policy.commonName,
      dnsNames: policy.dnsNames,
      notBefore,
      notAfter: Math.min(now + policy.servingLifetimeMs, caNotAfter),
    });
  }
  const bundle = [...added, ...plan.keepInBundle.filter((pem) => !added.includes(pem))];
  const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
  const K = CERTIFICATE_SECRET_KEYS;
  return {
    [K.caCert]: b64(ca.certPem),
    [K.caKey]: b64(ca.keyPem),
    ...(nextCa ? { [K.nextCaCert]: b64(nextCa.certPem), [K.nextCaKey]: b64(nextCa.keyPem) } : {}),
    [K.caBundle]: b64([...new Set(bundle)].join('')),
    [K.tlsCert]: b64(serving.certPem),
    [K.tlsKey]: b64(serving.keyPem),
  };
}

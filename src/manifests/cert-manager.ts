import { Construct } from 'constructs';
import type { ApiObject } from 'cdk8s';
import { kubeObject } from './kube-object.ts';
import { SyncWave, syncWave } from './sync-wave.ts';

/** The API version of cert-manager's Issuer and Certificate (cert-manager ≥ 1.0). */
export const CERT_MANAGER_API_VERSION = 'cert-manager.io/v1';

/**
 * The annotation by which cert-manager's cainjector copies the `ca.crt` of a Certificate's Secret into a
 * CRD's `spec.conversion.webhook.clientConfig.caBundle`; its value is `<namespace>/<Certificate name>`.
 */
export const INJECT_CA_FROM_ANNOTATION = 'cert-manager.io/inject-ca-from';

/** The metadata the chart writes on a namespaced cert-manager object. */
export interface CertManagerObjectMeta {
  readonly name: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}

/** `cert-manager.io/v1` Issuer, as far as the chart writes it (no kubernetes-models class exists for it). */
export interface CertManagerIssuer {
  readonly apiVersion: typeof CERT_MANAGER_API_VERSION;
  readonly kind: 'Issuer';
  readonly metadata: CertManagerObjectMeta;
  /** Exactly one issuer type: self-signed, or a CA whose certificate and key are in a Secret. */
  readonly spec: { readonly selfSigned: Record<string, never> } | { readonly ca: { readonly secretName: string } };
}

/** `cert-manager.io/v1` Certificate, as far as the chart writes it. */
export interface CertManagerCertificate {
  readonly apiVersion: typeof CERT_MANAGER_API_VERSION;
  readonly kind: 'Certificate';
  readonly metadata: CertManagerObjectMeta;
  readonly spec: {
    readonly secretName: string;
    readonly issuerRef: { readonly group: 'cert-manager.io'; readonly kind: 'Issuer'; readonly name: string };
    readonly isCA?: boolean;
    readonly commonName?: string;
    readonly dnsNames?: readonly string[];
    /** Go durations (`2160h`), as cert-manager parses them. */
    readonly duration: string;
    readonly renewBefore: string;
    readonly usages?: readonly string[];
    readonly privateKey: { readonly algorithm: 'RSA' | 'ECDSA'; readonly size: number; readonly rotationPolicy: 'Always' | 'Never' };
  };
}

/** Props of CertManagerWebhookCertificates. */
export interface CertManagerWebhookCertificatesProps {
  /** Namespace of the operator: the Issuers, Certificates and their Secrets live there. */
  readonly namespace: string;
  /** Prefix of the objects' names (the operator's name). */
  readonly namePrefix: string;
  /** DNS names of the serving certificate (the webhook Service's, as kube-apiserver dials it). */
  readonly dnsNames: readonly string[];
  /** Secret cert-manager writes the serving certificate into (`tls.crt`, `tls.key`, `ca.crt`); the Pods mount it. */
  readonly secretName: string;
  /**
   * Lifetime of the serving certificate.
   * @default '2160h' (90 days, cert-manager's default)
   */
  readonly duration?: string;
  /**
   * How long before the serving certificate expires cert-manager renews it.
   * @default '720h' (30 days: a third of the default lifetime, time to notice a failing renewal)
   */
  readonly renewBefore?: string;
  /**
   * Labels on every object.
   * @default {}
   */
  readonly labels?: Readonly<Record<string, string>>;
}

/** Names of the cert-manager objects for a name prefix (the CRD's `inject-ca-from` needs the serving one). */
export function certManagerNames(namePrefix: string): { selfSignedIssuer: string; caCertificate: string; caIssuer: string; servingCertificate: string } {
  return {
    selfSignedIssuer: `${namePrefix}-selfsigned`,
    caCertificate: `${namePrefix}-webhook-ca`,
    caIssuer: `${namePrefix}-webhook-ca`,
    servingCertificate: `${namePrefix}-webhook-serving`,
  };
}

/**
 * The conversion webhook's certificates kept by cert-manager instead of the controller: the usual
 * bootstrap chain of a self-signed Issuer, a CA Certificate (its own Secret), a CA Issuer, and the serving
 * Certificate it signs into `secretName`, all namespaced in the operator's namespace (no ClusterIssuer:
 * nothing outside the namespace can sign with this CA). A private CA rather than a self-signed serving
 * certificate so that a serving renewal keeps the CA that kube-apiserver trusts (cainjector copies the
 * CA into the CRD); every private key is regenerated at each renewal (`rotationPolicy: Always`).
 * RSA 2048, as the controller's own certificates (`src/runtime/tls-certificates.ts`).
 * Applied in the RBAC wave, so that the Secret exists (or is on its way) before the Deployment mounts it.
 */
export class CertManagerWebhookCertificates extends Construct {
  /** The serving Certificate. */
  public readonly servingCertificate: ApiObject;

  public constructor(scope: Construct, id: string, props: CertManagerWebhookCertificatesProps) {
    super(scope, id);
    const names = certManagerNames(props.namePrefix);
    const metadata = (name: string): CertManagerObjectMeta => ({ name, namespace: props.namespace, labels: { ...(props.labels ?? {}) }, annotations: syncWave(SyncWave.rbac) });
    const issuerRef = (name: string) => ({ group: 'cert-manager.io', kind: 'Issuer', name }) as const;
    const privateKey = { algorithm: 'RSA', size: 2048, rotationPolicy: 'Always' } as const;
    kubeObject<CertManagerIssuer>(this, 'SelfSignedIssuer', {
      apiVersion: CERT_MANAGER_API_VERSION,
      kind: 'Issuer',
      metadata: metadata(names.selfSignedIssuer),
      spec: { selfSigned: {} },
    });
    kubeObject<CertManagerCertificate>(this, 'CaCertificate', {
      apiVersion: CERT_MANAGER_API_VERSION,
      kind: 'Certificate',
      metadata: metadata(names.caCertificate),
      spec: {
        isCA: true,
        commonName: names.caCertificate,
        secretName: names.caCertificate,
        issuerRef: issuerRef(names.selfSignedIssuer),
        // 10 years, renewed a year ahead, as the controller's own CA (src/runtime/certificate-plan.ts).
        duration: '87600h',
        renewBefore: '8760h',
        privateKey,
      },
    });
    kubeObject<CertManagerIssuer>(this, 'CaIssuer', {
      apiVersion: CERT_MANAGER_API_VERSION,
      kind: 'Issuer',
      metadata: metadata(names.caIssuer),
      spec: { ca: { secretName: names.caCertificate } },
    });
    this.servingCertificate = kubeObject<CertManagerCertificate>(this, 'ServingCertificate', {
      apiVersion: CERT_MANAGER_API_VERSION,
      kind: 'Certificate',
      metadata: metadata(names.servingCertificate),
      spec: {
        secretName: props.secretName,
        issuerRef: issuerRef(names.caIssuer),
        // Go's TLS (kube-apiserver) checks only the subject alternative names; no common name.
        dnsNames: [...props.dnsNames],
        duration: props.duration ?? '2160h',
        renewBefore: props.renewBefore ?? '720h',
        usages: ['digital signature', 'key encipherment', 'server auth'],
        privateKey,
      },
    });
  }
}

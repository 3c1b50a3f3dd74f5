import { Construct } from 'constructs';
import type { ApiObject } from 'cdk8s';
import type { ISecret } from 'kubernetes-models/v1/Secret';
import type { IService } from 'kubernetes-models/v1/Service';
import { webhookDnsNames } from '../pure/names.ts';
import { CertManagerWebhookCertificates } from './cert-manager.ts';
import { kubeObject } from './kube-object.ts';
import { SyncWave, syncWave } from './sync-wave.ts';

/** Port of the conversion webhook in the controller's container (`--conversion-webhook-bind-address=:9443`). */
export const WEBHOOK_PORT = 9443;

/**
 * Who keeps the webhook's certificate: `controller`, the controller itself (a CA and serving certificate in
 * one Secret, rotated by the leader, the CA injected into the CRD; src/runtime/certificate-manager.ts), or
 * `cert-manager` (Issuers and Certificates, the CA injected by cert-manager's cainjector).
 */
export type WebhookCertificates = 'controller' | 'cert-manager';

/** The values {@link WebhookCertificates} may take. */
export const WEBHOOK_CERTIFICATES: readonly WebhookCertificates[] = ['controller', 'cert-manager'];

/**
 * `value` (default `controller`) when it is a {@link WebhookCertificates}; otherwise throws an error naming
 * `field` (props may come from JavaScript, unchecked).
 */
export function webhookCertificates(value: WebhookCertificates | undefined, field: string): WebhookCertificates {
  const certificates = value ?? 'controller';
  if (!WEBHOOK_CERTIFICATES.includes(certificates)) {
    throw new Error(`${field}: expected ${WEBHOOK_CERTIFICATES.map((c) => `'${c}'`).join(' or ')}, got ${JSON.stringify(value)}`);
  }
  return certificates;
}

/** Props of ConversionWebhook. */
export interface ConversionWebhookProps {
  /** Namespace of the operator (Service and Secret live there). */
  readonly namespace: string;
  /** Name of the Service kube-apiserver calls (`<name>.<namespace>.svc`, the certificate's DNS names). */
  readonly serviceName: string;
  /** Name of the Secret holding the serving certificate (and, kept by the controller, the CA). */
  readonly secretName: string;
  /**
   * Who keeps the certificate: `controller` ships the Secret empty; `cert-manager` ships no Secret but the
   * Issuers and Certificates ({@link CertManagerWebhookCertificates}) that make cert-manager write it.
   * @default 'controller'
   */
  readonly certificates?: WebhookCertificates;
  /**
   * Name prefix of the cert-manager objects (with `certificates: 'cert-manager'`).
   * @default serviceName
   */
  readonly certManagerNamePrefix?: string;
  /** The controller Pods' labels the Service selects (ControllerDeployment's selector). */
  readonly selector: Readonly<Record<string, string>>;
  /**
   * Labels on both objects.
   * @default {}
   */
  readonly labels?: Readonly<Record<string, string>>;
}

/**
 * What the conversion webhook needs besides the Deployment's flag and the RBAC: the Service in front of
 * every controller replica (kube-apiserver calls port 443, the Pods listen on {@link WEBHOOK_PORT}),
 * and the certificate. Kept by the controller, the Secret is shipped empty as the Lease is: the
 * controller fills and rotates it with get + update on this one name, so it needs no `create` (which
 * RBAC cannot restrict to a name), and a GitOps tool applying it without `data` never owns the keys the
 * controller writes. Kept by cert-manager, no Secret is shipped (cert-manager creates and owns it), only
 * the Issuers and Certificates.
 */
export class ConversionWebhook extends Construct {
  public readonly service: ApiObject;
  /** The empty Secret the controller fills; undefined when cert-manager keeps the certificate. */
  public readonly secret: ApiObject | undefined;
  /** The serving Certificate, when cert-manager keeps the certificate. */
  public readonly servingCertificate: ApiObject | undefined;

  public constructor(scope: Construct, id: string, props: ConversionWebhookProps) {
    super(scope, id);
    const labels = { ...(props.labels ?? {}) };
    if (webhookCertificates(props.certificates, 'ConversionWebhook: certificates') === 'cert-manager') {
      this.secret = undefined;
      this.servingCertificate = new CertManagerWebhookCertificates(this, 'Certificates', {
        namespace: props.namespace,
        namePrefix: props.certManagerNamePrefix ?? props.serviceName,
        dnsNames: webhookDnsNames(props.serviceName, props.namespace),
        secretName: props.secretName,
        labels,
      }).servingCertificate;
    } else {
      this.servingCertificate = undefined;
      this.secret = kubeObject<ISecret>(this, 'Secret', {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: props.secretName, namespace: props.namespace, labels, annotations: syncWave(SyncWave.rbac) },
        type: 'Opaque',
      });
    }
    this.service = kubeObject<IService>(this, 'Service', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: props.serviceName, namespace: props.namespace, labels, annotations: syncWave(SyncWave.controller) },
      spec: {
        type: 'ClusterIP',
        selector: { ...props.selector },
        ports: [{ name: 'webhook', port: 443, targetPort: 'webhook', protocol: 'TCP' }],
      },
    });
  }
}

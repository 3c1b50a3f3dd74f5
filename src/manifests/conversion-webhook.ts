import { Construct } from 'constructs';
import type { ApiObject } from 'cdk8s';
import type { ISecret } from 'kubernetes-models/v1/Secret';
import type { IService } from 'kubernetes-models/v1/Service';
import { kubeObject } from './kube-object.ts';
import { SyncWave, syncWave } from './sync-wave.ts';

/** Port of the conversion webhook in the controller's container (`--conversion-webhook-bind-address=:9443`). */
export const WEBHOOK_PORT = 9443;

/** Props of ConversionWebhook. */
export interface ConversionWebhookProps {
  /** Namespace of the operator (Service and Secret live there). */
  readonly namespace: string;
  /** Name of the Service kube-apiserver calls (`<name>.<namespace>.svc`, the certificate's DNS names). */
  readonly serviceName: string;
  /** Name of the Secret holding the CA and serving certificate. */
  readonly secretName: string;
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
 * and the certificate Secret, shipped empty as the Lease is: the controller fills and rotates it with
 * get + update on this one name, so it needs no `create` (which RBAC cannot restrict to a name), and a
 * GitOps tool applying it without `data` never owns the keys the controller writes.
 */
export class ConversionWebhook extends Construct {
  public readonly service: ApiObject;
  public readonly secret: ApiObject;

  public constructor(scope: Construct, id: string, props: ConversionWebhookProps) {
    super(scope, id);
    const labels = { ...(props.labels ?? {}) };
    this.secret = kubeObject<ISecret>(this, 'Secret', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: props.secretName, namespace: props.namespace, labels, annotations: syncWave(SyncWave.rbac) },
      type: 'Opaque',
    });
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

import { Construct } from 'constructs';
import type { ApiObject } from 'cdk8s';
import type { ILease } from 'kubernetes-models/coordination.k8s.io/v1/Lease';
import { kubeObject } from './kube-object.ts';
import { SyncWave, syncWave } from './sync-wave.ts';

/** Props of LeaderLease. */
export interface LeaderLeaseProps {
  /** Name of the Lease (the controller's `--lease-name`). */
  readonly name: string;
  /** Namespace of the Lease (the controller's `--lease-namespace`). */
  readonly namespace: string;
  /**
   * Labels on the Lease.
   * @default {}
   */
  readonly labels?: Readonly<Record<string, string>>;
}

/**
 * The leader-election Lease, shipped with an empty spec: the controller only needs get + update on it
 * (no create), and a GitOps tool that applies the empty spec never owns the holder fields the
 * controller renews.
 */
export class LeaderLease extends Construct {
  /** The Lease API object. */
  public readonly lease: ApiObject;

  public constructor(scope: Construct, id: string, props: LeaderLeaseProps) {
    super(scope, id);
    this.lease = kubeObject<ILease>(this, 'Resource', {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: props.name,
        namespace: props.namespace,
        labels: { ...(props.labels ?? {}) },
        annotations: syncWave(SyncWave.rbac),
      },
      spec: {},
    });
  }
}

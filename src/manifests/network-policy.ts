import { isIPv4, isIPv6 } from 'node:net';
import { Construct } from 'constructs';
import type { ApiObject } from 'cdk8s';
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import type { INetworkPolicyIngressRule } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicyIngressRule';
import type { INetworkPolicyPeer } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicyPeer';
import { WEBHOOK_PORT } from './conversion-webhook.ts';
import { HEALTH_PORT, METRICS_PORT } from './controller-deployment.ts';
import { kubeObject } from './kube-object.ts';
import { SyncWave, syncWave } from './sync-wave.ts';

/**
 * Who may reach each port of the controller Pods. The webhook and metrics ports are open from anywhere
 * unless narrowed; the health port only from the Pod's own node (kubelet's probes), which no
 * NetworkPolicy can block ("Pods cannot ... block access from their resident node", Kubernetes'
 * network policy documentation), unless `healthFrom` opens it to more.
 */
export interface ControllerNetworkPolicyOptions {
  /**
   * Sources of conversion requests. kube-apiserver calls the webhook from its own address, which no pod
   * or namespace selector matches in general (a managed control plane runs outside the cluster's Pods),
   * so the default is anywhere; narrow it to an `ipBlock` of the control plane's addresses where known
   * (kubeadm: the control-plane nodes; GKE: the control plane's CIDR).
   * @default anywhere
   */
  readonly webhookFrom?: readonly INetworkPolicyPeer[];
  /** Sources of `/metrics` scrapes, e.g. the monitoring namespace. @default anywhere */
  readonly metricsFrom?: readonly INetworkPolicyPeer[];
  /**
   * Sources of `/healthz` and `/readyz` besides the Pod's node. kubelet probes from the node, which
   * NetworkPolicies do not apply to, so by default no one else reaches the port: a flood of
   * connections from other Pods cannot starve the probes and have kubelet restart the controller. A CNI
   * that does filter its node's traffic needs the node's addresses here (an `ipBlock`).
   * @default the Pod's node only
   */
  readonly healthFrom?: readonly INetworkPolicyPeer[];
}

/** Props of ControllerNetworkPolicy. */
export interface ControllerNetworkPolicyProps extends ControllerNetworkPolicyOptions {
  readonly name: string;
  readonly namespace: string;
  /** Labels of the controller Pods (ControllerDeployment's selector: every release's Pods). */
  readonly podSelector: Readonly<Record<string, string>>;
  /** @default WEBHOOK_PORT */
  readonly webhookPort?: number;
  /** @default METRICS_PORT */
  readonly metricsPort?: number;
  /** @default HEALTH_PORT */
  readonly healthPort?: number;
  /** @default {} */
  readonly labels?: Readonly<Record<string, string>>;
}

/** `port` when it is a TCP port number; otherwise throws naming `field`. */
function checkedPort(port: number, field: string): number {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`ControllerNetworkPolicy: ${field}: ${JSON.stringify(port)} is not a port from 1 to 65535`);
  return port;
}

/** `peers` when each names a source (an ipBlock with a CIDR, or selectors); otherwise throws naming `field`. */
function checkedPeers(peers: readonly INetworkPolicyPeer[], field: string): INetworkPolicyPeer[] {
  return peers.map((peer, i) => {
    const at = `ControllerNetworkPolicy: ${field}[${i}]`;
    if (peer.ipBlock === undefined && peer.podSelector === undefined && peer.namespaceSelector === undefined) {
      throw new Error(`${at}: names no source; set ipBlock, podSelector or namespaceSelector`);
    }
    if (peer.ipBlock !== undefined) {
      const [address, bits, ...rest] = String(peer.ipBlock.cidr).split('/');
      const max = isIPv4(address ?? '') ? 32 : isIPv6(address ?? '') ? 128 : -1;
      if (max < 0 || rest.length > 0 || !/^\d{1,3}$/.test(bits ?? '') || Number(bits) > max) {
        throw new Error(`${at}.ipBlock.cidr: ${JSON.stringify(peer.ipBlock.cidr)} is not a CIDR (e.g. "10.0.0.0/24")`);
      }
    }
    return peer;
  });
}

/**
 * A NetworkPolicy isolating the controller Pods for ingress: only the webhook and metrics ports are
 * open, each to its sources (anywhere unless narrowed), the health port to the Pod's node (and
 * `healthFrom`), every other port closed. Egress is left alone: the controller must reach
 * kube-apiserver, whose address is the cluster's. Takes effect only where the CNI enforces NetworkPolicies.
 */
export class ControllerNetworkPolicy extends Construct {
  public readonly networkPolicy: ApiObject;

  public constructor(scope: Construct, id: string, props: ControllerNetworkPolicyProps) {
    super(scope, id);
    const rule = (port: number, field: string, from: readonly INetworkPolicyPeer[] | undefined, fromField: string): INetworkPolicyIngressRule => ({
      ports: [{ protocol: 'TCP', port: checkedPort(port, field) }],
      ...(from !== undefined ? { from: checkedPeers(from, fromField) } : {}),
    });
    this.networkPolicy = kubeObject<INetworkPolicy>(this, 'Resource', {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: props.name, namespace: props.namespace, labels: { ...(props.labels ?? {}) }, annotations: syncWave(SyncWave.controller) },
      spec: {
        podSelector: { matchLabels: { ...props.podSelector } },
        policyTypes: ['Ingress'],
        ingress: [
          rule(props.webhookPort ?? WEBHOOK_PORT, 'webhookPort', props.webhookFrom, 'webhookFrom'),
          rule(props.metricsPort ?? METRICS_PORT, 'metricsPort', props.metricsFrom, 'metricsFrom'),
          // No rule without sources: a rule with none would open the port to anywhere.
          ...(props.healthFrom !== undefined ? [rule(props.healthPort ?? HEALTH_PORT, 'healthPort', props.healthFrom, 'healthFrom')] : []),
        ],
      },
    });
  }
}

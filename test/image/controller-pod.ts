/**
 * The controller's Pod as kubelet would run it from dist/'s Deployment: its Pod template with the
 * ServiceAccount volume the admission plugin adds, that volume's files (token, the API server's CA, the
 * namespace) and the in-cluster environment, for a container of the image against a test API server.
 * Used by test/image/controller-container.test.ts and `npm run bench:image`.
 */
import { chmodSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import { parse } from 'yaml';
import type { KubeObject } from '../../src/kube/object.ts';
import { CONTROLLER_SA, deploymentArgs, distDocuments, type ClusterOn, type ClusterServer } from '../e2e/harness.ts';
import type { PodEnvironment } from './container.ts';

/** Where a Pod gets its ServiceAccount's token, CA and namespace. */
const SERVICE_ACCOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
const SA_VOLUME = 'kube-api-access';

/** The Pod template of dist/'s controller Deployment, with the ServiceAccount volume the admission plugin adds. */
export function deploymentPod(): { pod: IPodSpec; container: IContainer } {
  type Deployment = KubeObject & { spec: { template: { spec: IPodSpec } } };
  const pod = structuredClone(distDocuments().find((d): d is Deployment => d.kind === 'Deployment')!.spec.template.spec);
  pod.volumes = [...(pod.volumes ?? []), { name: SA_VOLUME, projected: { sources: [] } }];
  const container = pod.containers[0]!;
  container.volumeMounts = [...(container.volumeMounts ?? []), { name: SA_VOLUME, mountPath: SERVICE_ACCOUNT_PATH, readOnly: true }];
  return { pod, container };
}

/**
 * What kubelet gives the controller's container on `cluster`: the projected ServiceAccount files (in a
 * folder under the cluster's), the in-cluster environment, and dist/'s args with the listen addresses
 * on ephemeral loopback ports (the container shares the host's network).
 */
export async function controllerEnvironment(cluster: ClusterOn<ClusterServer>): Promise<PodEnvironment> {
  const dir = mkdtempSync(join(cluster.dir, 'serviceaccount-'));
  chmodSync(dir, 0o755);
  const kubeconfig = parse(cluster.server.kubeconfig()) as { clusters: { cluster: { 'certificate-authority-data': string } }[] };
  writeFileSync(join(dir, 'ca.crt'), Buffer.from(kubeconfig.clusters[0]!.cluster['certificate-authority-data'], 'base64'));
  writeFileSync(join(dir, 'token'), await cluster.server.serviceAccountToken(CONTROLLER_SA.namespace, CONTROLLER_SA.name));
  writeFileSync(join(dir, 'namespace'), CONTROLLER_SA.namespace);
  // A projected volume's defaultMode: readable by the Pod's user.
  for (const file of readdirSync(dir)) chmodSync(join(dir, file), 0o644);
  const url = new URL(cluster.server.httpsUrl);
  return {
    volumes: { [SA_VOLUME]: dir },
    env: { KUBERNETES_SERVICE_HOST: url.hostname, KUBERNETES_SERVICE_PORT: url.port },
    args: [...deploymentArgs(), '--metrics-bind-address=127.0.0.1:0', '--health-probe-bind-address=127.0.0.1:0', '--log-level=debug'],
  };
}

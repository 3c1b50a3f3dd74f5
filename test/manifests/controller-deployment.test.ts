import { Testing } from 'cdk8s';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKUP_IMAGE, DEFAULT_IMAGE } from '../../src/pure/index.ts';
import { ControllerDeployment, type ControllerDeploymentProps } from '../../src/manifests/index.ts';

function synth(props: Partial<ControllerDeploymentProps> = {}): Record<string, any> {
  const chart = Testing.chart();
  new ControllerDeployment(chart, 'Controller', {
    name: 'op', namespace: 'op-system', serviceAccountName: 'op', leaseName: 'op-leader', leaseNamespace: 'op-system', ...props,
  });
  return Testing.synth(chart)[0] as Record<string, any>;
}

describe('ControllerDeployment', () => {
  const deployment = synth();
  const pod = deployment['spec'].template.spec;
  const container = pod.containers[0];

  it('matches the snapshot', () => {
    expect(deployment).toMatchSnapshot();
  });

  it('is valid for the Kubernetes OpenAPI schema', () => {
    expect(() => new Deployment(deployment as never).validate()).not.toThrow();
  });

  it('passes the controller flags of issue 5, with the Lease and backup image', () => {
    expect(container.args).toEqual([
      '--leader-elect',
      '--lease-name=op-leader',
      '--lease-namespace=op-system',
      '--metrics-bind-address=:8080',
      '--health-probe-bind-address=:8081',
      '--concurrency=2',
      '--log-level=info',
      '--log-format=json',
      `--backup-image=${DEFAULT_BACKUP_IMAGE}`,
    ]);
    expect(container.command).toBeUndefined();
  });

  it('repeats --namespace per watched namespace; the backup image is its own prop, not the controller image', () => {
    const args = synth({ watchedNamespaces: ['a', 'b'], image: 'r.example/op:2' })['spec'].template.spec.containers[0].args;
    expect(args.filter((a: string) => a.startsWith('--namespace='))).toEqual(['--namespace=a', '--namespace=b']);
    expect(args).toContain(`--backup-image=${DEFAULT_BACKUP_IMAGE}`);
    expect(synth({ image: 'r.example/op:2', backupImage: 'r.example/op:1' })['spec'].template.spec.containers[0].args).toContain('--backup-image=r.example/op:1');
  });

  it('passes --allowed-backup-images only when images besides its own are allowed', () => {
    expect(container.args.some((a: string) => a.startsWith('--allowed-backup-images'))).toBe(false);
    const args = synth({ allowedBackupImages: ['registry.example.com/backup/*', 'ghcr.io/acme/etcd:1'] })['spec'].template.spec.containers[0].args;
    expect(args).toContain('--allowed-backup-images=registry.example.com/backup/*,ghcr.io/acme/etcd:1');
  });

  it.each([
    ['', 'allowedBackupImages: an image pattern must not be empty'],
    ['a/*,b/*', 'contains a comma'],
  ])('refuses the allowed image pattern %j, naming the prop', (pattern, message) => {
    expect(() => synth({ allowedBackupImages: [pattern] })).toThrow(message);
  });

  it('passes --allowed-backup-endpoints only when endpoints besides AWS are allowed, and refuses a bad pattern naming the prop', () => {
    expect(container.args.some((a: string) => a.startsWith('--allowed-backup-endpoints'))).toBe(false);
    const args = synth({ allowedBackupEndpoints: ['https://minio.storage:9000', 'https://*.ceph.internal'] })['spec'].template.spec.containers[0].args;
    expect(args).toContain('--allowed-backup-endpoints=https://minio.storage:9000,https://*.ceph.internal');
    expect(() => synth({ allowedBackupEndpoints: ['minio:9000'] })).toThrow('allowedBackupEndpoints: endpoint pattern "minio:9000" is not an http(s)://host[:port] URL');
  });

  it('runs restricted, with its token, probes on 8081 and metrics on 8080', () => {
    expect(pod.automountServiceAccountToken).toBe(true);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(container.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'health' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'health' });
    expect(container.ports).toEqual([
      { name: 'metrics', containerPort: 8080, protocol: 'TCP' },
      { name: 'health', containerPort: 8081, protocol: 'TCP' },
    ]);
  });

  it('selects its Pods with explicit labels only (no cdk8s.io/metadata.addr)', () => {
    expect(deployment['spec'].selector.matchLabels).toEqual({ 'app.kubernetes.io/name': 'backupschedule-operator', 'app.kubernetes.io/instance': 'op' });
    expect(JSON.stringify(deployment)).not.toContain('cdk8s.io');
    expect(deployment['spec'].replicas).toBe(2);
  });
});

describe('the Deployment args and the controller command line (issue 5)', () => {
  it('parse into the options the chart intended', async () => {
    const { parseCommandLine } = await import('../../src/controller/cli-options.ts');
    const args = synth({ watchedNamespaces: ['team-a', 'team-b'], image: 'r.example/op:3', backupImage: 'r.example/op:3' })['spec'].template.spec.containers[0].args;
    expect(parseCommandLine(args)).toMatchObject({
      options: {
        leaderElect: true,
        leaseName: 'op-leader',
        leaseNamespace: 'op-system',
        namespaces: ['team-a', 'team-b'],
        concurrency: 2,
        logLevel: 'info',
        logFormat: 'json',
        backupImage: 'r.example/op:3',
      },
    });
  });
});

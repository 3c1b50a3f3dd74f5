import { Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { ExampleChart, OperatorChart } from '../../src/manifests/index.ts';

function synth(props: ConstructorParameters<typeof OperatorChart>[2]): Record<string, any>[] {
  return Testing.synth(new OperatorChart(Testing.app(), 'test', props)) as Record<string, any>[];
}

describe('OperatorChart', () => {
  it('matches the snapshot with default props', () => {
    expect(synth({})).toMatchSnapshot();
  });

  it('applies namespace, image, replicas, watched namespaces and lease name everywhere they belong', () => {
    const objects = synth({ namespace: 'ops', image: 'r.example/op:9', backupImage: 'r.example/op:8', replicas: 3, watchedNamespaces: ['team-a'], leaseName: 'my-lease' });
    const find = (kind: string) => objects.find((o) => o['kind'] === kind) as Record<string, any>;
    const deployment = find('Deployment');
    const args: string[] = deployment['spec'].template.spec.containers[0].args;
    expect(deployment['metadata'].namespace).toBe('ops');
    expect(deployment['spec'].replicas).toBe(3);
    expect(deployment['spec'].template.spec.containers[0].image).toBe('r.example/op:9');
    expect(args).toEqual(expect.arrayContaining(['--lease-name=my-lease', '--lease-namespace=ops', '--namespace=team-a', '--backup-image=r.example/op:8']));
    expect(find('Lease')['metadata']).toMatchObject({ name: 'my-lease', namespace: 'ops' });
    expect(find('Role')['rules'][0].resourceNames).toEqual(['my-lease']);
    expect(find('Namespace')['metadata'].name).toBe('ops');
    expect(objects.some((o) => o['kind'] === 'BackupSchedule')).toBe(false);
  });

  it('never contains the example BackupSchedule: it is a chart of its own (dist/examples/)', () => {
    expect(synth({}).map((o) => o['kind'])).not.toContain('BackupSchedule');
  });
});

describe('ExampleChart', () => {
  it('holds the example Namespace and the kubelings/nightly-etcd BackupSchedule, applied in the last sync wave', () => {
    const objects = Testing.synth(new ExampleChart(Testing.app(), 'examples')) as Record<string, any>[];
    expect(objects.map((o) => `${o['kind']}/${o['metadata'].name}`)).toEqual(['Namespace/kubelings', 'BackupSchedule/nightly-etcd']);
    expect(objects[1]?.['metadata'].annotations['argocd.argoproj.io/sync-wave']).toBe('2');
  });
});

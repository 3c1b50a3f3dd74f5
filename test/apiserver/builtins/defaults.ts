import type { KubeObject } from '../../../src/kube/object.ts';
import { ensureObj, obj, objs, setDefault } from './json.ts';
import { defaultPodTemplateSpec } from './pod-defaults.ts';
import { defaultPodFailurePolicy } from './pod-failure-policy.ts';

/**
 * Applies, in place, the defaults kube-apiserver gives a built-in object on every write (the
 * generated `SetDefaults_*` functions of the served version plus what create strategies add and
 * what Go always serializes), keyed by API group and plural resource.
 *
 * - batch/v1 cronjobs: `SetDefaults_CronJob` (concurrencyPolicy Allow, suspend false,
 *   successfulJobsHistoryLimit 3, failedJobsHistoryLimit 1); the job template gets only pod-template
 *   defaults and podFailurePolicy's onPodConditions status True (a per-type defaulter, unlike
 *   `SetDefaults_Job`, which runs on Jobs, not on `jobTemplate.spec`) — and `status: {}`.
 * - batch/v1 jobs: `SetDefaults_Job` (parallelism/completions 1 when both unset, parallelism 1,
 *   backoffLimit 6 (MaxInt32 with backoffLimitPerIndex), completionMode NonIndexed, suspend false,
 *   podReplacementPolicy TerminatingOrFailed (Failed with a podFailurePolicy), onPodConditions
 *   status True, metadata.labels from the template when empty) plus the pod template.
 * - namespaces: label `kubernetes.io/metadata.name`, `spec.finalizers: [kubernetes]` when absent,
 *   `status.phase: Active`.
 * - rbac bindings: roleRef.apiGroup and User/Group subject apiGroup `rbac.authorization.k8s.io`.
 * - core/v1 services: `SetDefaults_Service` (type ClusterIP, sessionAffinity None, internalTrafficPolicy
 *   Cluster, port protocol TCP, targetPort = port); the address comes from its create hook
 *   (service-allocation.ts), as kube's REST storage allocates it.
 * - core/v1 events: the always-serialized `eventTime: null`, `reportingComponent`, `reportingInstance`.
 * Leases, ServiceAccounts and the rest have no server defaults.
 */
export function applyBuiltinDefaults(group: string, resource: string, object: KubeObject): void {
  switch (`${resource}.${group}`) {
    case 'cronjobs.batch':
      return defaultCronJob(object);
    case 'jobs.batch':
      return defaultJob(object);
    case 'namespaces.':
      return defaultNamespace(object);
    case 'events.':
      return defaultCoreEvent(object);
    case 'services.':
      return defaultService(object);
    case 'rolebindings.rbac.authorization.k8s.io':
    case 'clusterrolebindings.rbac.authorization.k8s.io':
      return defaultBinding(object);
    default:
      return;
  }
}

function defaultCronJob(cronJob: KubeObject): void {
  const spec = ensureObj(cronJob, 'spec');
  setDefault(spec, 'concurrencyPolicy', 'Allow');
  setDefault(spec, 'suspend', false);
  setDefault(spec, 'successfulJobsHistoryLimit', 3);
  setDefault(spec, 'failedJobsHistoryLimit', 1);
  const jobTemplate = ensureObj(spec, 'jobTemplate');
  const meta = ensureObj(jobTemplate, 'metadata');
  if (!('creationTimestamp' in meta)) meta['creationTimestamp'] = null;
  const jobSpec = ensureObj(jobTemplate, 'spec');
  defaultPodFailurePolicy(jobSpec);
  defaultPodTemplateSpec(ensureObj(jobSpec, 'template'));
  if (!obj(cronJob['status'])) cronJob['status'] = {};
}

function defaultJob(job: KubeObject): void {
  const spec = ensureObj(job, 'spec');
  if (spec['completions'] == null && spec['parallelism'] == null) {
    spec['completions'] = 1;
    spec['parallelism'] = 1;
  }
  setDefault(spec, 'parallelism', 1);
  setDefault(spec, 'backoffLimit', spec['backoffLimitPerIndex'] != null ? 2147483647 : 6);
  const template = ensureObj(spec, 'template');
  const templateLabels = obj(obj(template['metadata'])?.['labels']);
  if (templateLabels && Object.keys(job.metadata.labels ?? {}).length === 0) job.metadata.labels = { ...(templateLabels as Record<string, string>) };
  setDefault(spec, 'completionMode', 'NonIndexed');
  setDefault(spec, 'suspend', false);
  defaultPodFailurePolicy(spec);
  setDefault(spec, 'podReplacementPolicy', obj(spec['podFailurePolicy']) ? 'Failed' : 'TerminatingOrFailed');
  defaultPodTemplateSpec(template);
  if (!obj(job['status'])) job['status'] = {};
}

function defaultNamespace(namespace: KubeObject): void {
  // NamespaceDefaultLabelName (GA in 1.22): the label always equals the name.
  if (namespace.metadata.name) namespace.metadata.labels = { ...namespace.metadata.labels, 'kubernetes.io/metadata.name': namespace.metadata.name };
  const spec = ensureObj(namespace, 'spec');
  // The create strategy adds the kubernetes finalizer; an object that already went through it keeps its list.
  if (!Array.isArray(spec['finalizers'])) spec['finalizers'] = ['kubernetes'];
  setDefault(ensureObj(namespace, 'status'), 'phase', 'Active');
}

function defaultCoreEvent(event: KubeObject): void {
  if (!('eventTime' in event)) event['eventTime'] = null;
  if (!('reportingComponent' in event)) event['reportingComponent'] = '';
  if (!('reportingInstance' in event)) event['reportingInstance'] = '';
}

function defaultBinding(binding: KubeObject): void {
  const roleRef = obj(binding['roleRef']);
  if (roleRef) setDefault(roleRef, 'apiGroup', 'rbac.authorization.k8s.io');
  for (const subject of objs(binding['subjects'])) {
    if (subject['kind'] === 'User' || subject['kind'] === 'Group') setDefault(subject, 'apiGroup', 'rbac.authorization.k8s.io');
  }
}

function defaultService(service: KubeObject): void {
  const spec = ensureObj(service, 'spec');
  setDefault(spec, 'type', 'ClusterIP');
  setDefault(spec, 'sessionAffinity', 'None');
  for (const port of objs(spec['ports'])) {
    setDefault(port, 'protocol', 'TCP');
    setDefault(port, 'targetPort', port['port']);
  }
  if (spec['type'] !== 'ExternalName') setDefault(spec, 'internalTrafficPolicy', 'Cluster');
}

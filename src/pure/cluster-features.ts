/**
 * What the BackupSchedule CRD and its child CronJob need from a Kubernetes version, and what goes
 * missing on an older cluster. Pure: the controller reads `/version` at start-up and logs
 * {@link missingFeatures}; a ChildNotPersisted condition names the likely cause with {@link notPersistedCause}.
 */

/** A Kubernetes `major.minor`, from the API server's `/version`. */
export interface KubeVersion {
  readonly major: number;
  readonly minor: number;
  /** As the server reports it, e.g. `v1.24.17-eks-1`. */
  readonly gitVersion: string;
}

/** One feature the operator uses and the Kubernetes version that has it on by default. */
export interface ClusterFeature {
  /** Short name, for logs. */
  readonly name: string;
  /** First minor version (of 1.x) where it is available by default. */
  readonly sinceMinor: number;
  /** What happens without it. */
  readonly without: string;
}

/** The features, in the order the README lists them. */
export const CLUSTER_FEATURES: readonly ClusterFeature[] = [
  {
    name: 'batch/v1 CronJob',
    sinceMinor: 21,
    without: 'the controller cannot create its CronJobs (batch/v1 CronJob is GA in 1.21): it does not work on this cluster',
  },
  {
    name: 'CronJob spec.timeZone',
    sinceMinor: 25,
    without:
      'CronJob time zones are beta and on by default from 1.25 (GA in 1.27): the API server drops spec.timeZone, and schedules that set timeZone report Ready=False/ChildNotPersisted',
  },
  {
    name: 'CRD validation rules (CEL)',
    sinceMinor: 25,
    without:
      'the CRD\'s x-kubernetes-validations are beta and on by default from 1.25 (GA in 1.29): cross-field rules are not enforced at admission; the controller still reports such specs as Ready=False/InvalidSpec',
  },
  {
    name: 'Job podFailurePolicy',
    sinceMinor: 26,
    without:
      'Job podFailurePolicy is beta and on by default from 1.26 (GA in 1.31): the controller leaves it out of the CronJob, so the Job retries exit 3 (incomplete archive) and exit 4 (pruning failed) up to spec.backoffLimit instead of stopping',
  },
  {
    name: 'fieldPath of CRD validation rules',
    sinceMinor: 28,
    without: 'a failed CEL rule is reported on the object holding the rule rather than on the field it names (fieldPath is honoured from 1.28)',
  },
];

/**
 * Parses the `major`/`minor` of a `/version` answer (`"1"`, `"24+"` on some managed clusters), falling
 * back to `gitVersion` (`v1.24.3`). Undefined when neither says.
 */
export function parseKubeVersion(info: unknown): KubeVersion | undefined {
  if (typeof info !== 'object' || info === null) return undefined;
  const record = info as Record<string, unknown>;
  const gitVersion = typeof record['gitVersion'] === 'string' ? record['gitVersion'] : '';
  const major = Number.parseInt(String(record['major'] ?? ''), 10);
  const minor = Number.parseInt(String(record['minor'] ?? ''), 10);
  if (Number.isInteger(major) && Number.isInteger(minor)) return { major, minor, gitVersion };
  const match = /^v?(\d+)\.(\d+)/.exec(gitVersion);
  return match ? { major: Number(match[1]), minor: Number(match[2]), gitVersion } : undefined;
}

/** The features a cluster of `version` lacks (none for a future major version). */
export function missingFeatures(version: KubeVersion): ClusterFeature[] {
  if (version.major !== 1) return version.major < 1 ? [...CLUSTER_FEATURES] : [];
  return CLUSTER_FEATURES.filter((f) => version.minor < f.sinceMinor);
}

/**
 * Whether the child CronJob should carry a podFailurePolicy: on 1.26+ and when the version is not known
 * yet (a current cluster is the likely case); an older server drops the field, which would read as drift.
 */
export function supportsPodFailurePolicy(version: KubeVersion | undefined): boolean {
  return version === undefined || !missingFeatures(version).some((f) => f.name === 'Job podFailurePolicy');
}

function describeVersion(version: KubeVersion | undefined): string {
  return version ? `the API server reports ${version.gitVersion || `${version.major}.${version.minor}`}` : "the API server's version is unknown";
}

/**
 * The likely cause of the server not keeping `fields` of the child, for the ChildNotPersisted
 * condition: the Kubernetes version for `spec.timeZone` on a cluster too old for it, else what
 * rewrites or drops fields (a mutating admission webhook, a feature gate that is off).
 */
export function notPersistedCause(fields: readonly string[], version: KubeVersion | undefined): string {
  const webhook = 'a mutating admission webhook (Kyverno, Gatekeeper, a platform\'s defaults) or a disabled feature gate rewrites or drops them';
  if (!fields.includes('spec.timeZone')) {
    const gate = fields.some((f) => f.startsWith('spec.jobTemplate.spec.podFailurePolicy')) ? ' (for spec.jobTemplate.spec.podFailurePolicy: the JobPodFailurePolicy feature gate, on by default from 1.26)' : '';
    return `most likely ${webhook}${gate}`;
  }
  const old = version !== undefined && version.major === 1 && version.minor < 25;
  const timeZone = old
    ? `spec.timeZone needs Kubernetes 1.25 or later (${describeVersion(version)}): remove spec.timeZone or upgrade the cluster`
    : `spec.timeZone needs Kubernetes 1.25 or later with the CronJobTimeZone feature gate on (${describeVersion(version)}), or a mutating admission webhook removes it`;
  return fields.length === 1 ? timeZone : `${timeZone}; for the other fields, ${webhook}`;
}

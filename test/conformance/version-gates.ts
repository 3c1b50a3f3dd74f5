/**
 * The one table of version-dependent behaviour in the conformance suite. Every expectation that a
 * Kubernetes release changed is gated through an entry here: on a server of that release or newer the
 * test asserts the behaviour, on an older one it asserts the `before` behaviour when that is well
 * defined (a pruned field, an ignored parameter), and otherwise skips with the note
 * `not in v1.20: <what> (<ref>, since <release>)`, which the run reports and counts apart from passes
 * and failures.
 *
 * `since` is the first release that has the behaviour ON BY DEFAULT (a beta feature gate that is on, or
 * GA), since the suite judges clusters as they come; `stages` gives the whole history. The test API
 * server reports 1.32 and models the newest behaviour, so there every gate is open.
 */
import { atLeast, parseRelease, releaseName, type KubeVersion } from './harness/server-version.ts';

/** One version-dependent behaviour. */
export interface Behaviour {
  /** What a server of `since` or newer does, as the suite asserts it. */
  readonly what: string;
  /** First release with the behaviour on by default, `<major>.<minor>`. */
  readonly since: string;
  /** Its history: `alpha 1.24 (off), beta 1.25 (on), GA 1.27`. */
  readonly stages: string;
  /** The KEP or pull request that introduced it: `KEP-3140`, `kubernetes/kubernetes#96190`. */
  readonly ref: string;
  /** What an older server does, when the suite asserts that instead of skipping. */
  readonly before?: string;
}

/** The table. Keys are the ids tests gate on. */
export const BEHAVIOURS = {
  'cronjob-time-zone': {
    what: 'CronJob spec.timeZone is stored and validated (unknown time zone, Local refused)',
    since: '1.25',
    stages: 'alpha 1.24 (off), beta 1.25 (on), GA 1.27',
    ref: 'KEP-3140',
    before: 'spec.timeZone is dropped on write (an unknown field of batch/v1 CronJobSpec), any value is accepted',
  },
  'cronjob-schedule-cron-v3': {
    what: 'CronJob spec.schedule is parsed by robfig/cron v3 (lower-case errors)',
    since: '1.22',
    stages: 'dependency update, no feature gate: 1.22',
    ref: 'kubernetes/kubernetes#102735',
    before: 'robfig/cron v1.1.0 parses it: the same errors, capitalized',
  },
  'crd-validation-rules': {
    what: 'CRD x-kubernetes-validations (CEL) rules are kept in the CRD and evaluated on writes',
    since: '1.25',
    stages: 'alpha 1.23 (off), beta 1.25 (on), GA 1.29',
    ref: 'KEP-2876',
    before: 'x-kubernetes-validations is pruned from the CRD schema; objects breaking a rule are accepted',
  },
  'crd-validation-rules-skipped-cause': {
    what: 'a 422 whose errors block the CRD\'s CEL rules (type, required, enum, too long, too many) ends with the cause `<nil>: Invalid value: "null": some validation rules were not checked…`',
    since: '1.25',
    stages: 'merged for 1.24 while CEL rules were alpha (off), so on by default with them in 1.25',
    ref: 'kubernetes/kubernetes#108859 + KEP-2876',
    before: 'the CRD keeps no CEL rules (pruned), so the 422 lists only the schema errors',
  },
  'field-validation': {
    what: 'the fieldValidation query parameter (Strict → 400 strict decoding error, Warn → Warning header, Ignore) and Warn as the default',
    since: '1.25',
    stages: 'alpha 1.23 (off), beta 1.25 (on), GA 1.27',
    ref: 'KEP-2885',
    before: 'the parameter is ignored: unknown fields are pruned silently, with no Warning header',
  },
  'list-from-cache-fresh': {
    what: 'a LIST with resourceVersionMatch=NotOlderThan at the resourceVersion of a consistent LIST is served at once (the watch cache requests progress from etcd to catch up)',
    since: '1.31',
    stages: 'alpha 1.28 (off), beta 1.31 (on), GA 1.34',
    ref: 'KEP-2340',
  },
  'openapi-v3': {
    what: 'GET /openapi/v3 (the discovery of per-group-version OpenAPI v3 documents)',
    since: '1.24',
    stages: 'alpha 1.23 (off), beta 1.24 (on), GA 1.27',
    ref: 'KEP-2896',
    before: '/openapi/v3 answers 404',
  },
  'scale-subresource-ownership': {
    what: 'a write through /scale is recorded as its field manager\'s (managedFields entry with subresource: scale), so an apply of another spec.replicas conflicts with it',
    since: '1.22',
    stages: 'no feature gate: 1.22 (ManagedFieldsEntry.subresource, then scale ownership built on it)',
    ref: 'kubernetes/kubernetes#98377 + kubernetes/kubernetes#100970',
    before: 'a /scale write leaves managedFields as they were: the applier still owns spec.replicas and an apply of another count succeeds',
  },
  'service-update-keeps-cluster-ip': {
    what: 'an update of a Service that leaves spec.clusterIP/clusterIPs out keeps the allocated addresses',
    since: '1.21',
    stages: 'fix, no feature gate: 1.21',
    ref: 'kubernetes/kubernetes#96684',
    before: '422 spec.clusterIPs[0]: "primary clusterIP can not be unset"',
  },
  'service-ip-families': {
    what: 'a Service is stored with spec.ipFamilyPolicy (SingleStack) and spec.ipFamilies (the cluster\'s primary family)',
    since: '1.21',
    stages: 'IPv6DualStack rework alpha 1.20 (off), beta 1.21 (on), GA 1.23',
    ref: 'KEP-563',
    before: 'both fields are dropped on write (IPv6DualStack off); spec.clusterIPs is set',
  },
  'service-internal-traffic-policy': {
    what: 'a Service is defaulted with spec.internalTrafficPolicy: Cluster',
    since: '1.22',
    stages: 'alpha 1.21 (off), beta 1.22 (on), GA 1.26',
    ref: 'KEP-2086',
    before: 'the field does not exist: spec.internalTrafficPolicy is absent',
  },
  'self-subject-review': {
    what: 'authentication.k8s.io/v1 SelfSubjectReview (kubectl auth whoami)',
    since: '1.28',
    stages: 'alpha 1.26 (off), beta 1.27 (on), GA 1.28 (authentication.k8s.io/v1)',
    ref: 'KEP-3325',
  },
} as const satisfies Record<string, Behaviour>;

/** An entry of {@link BEHAVIOURS}. */
export type BehaviourId = keyof typeof BEHAVIOURS;

/** True when a server of `version` has behaviour `id`. */
export function hasBehaviour(version: KubeVersion, id: BehaviourId): boolean {
  return atLeast(version, parseRelease(BEHAVIOURS[id].since));
}

/** `not in v1.20: <what> (<ref>, since 1.25)`: the skip note or annotation of a gated test. */
export function gateNote(version: KubeVersion, id: BehaviourId): string {
  const b: Behaviour = BEHAVIOURS[id];
  return `not in ${releaseName(version)}: ${b.what} (${b.ref}, since ${b.since})`;
}

/** `asserts the v1.20 behaviour: <before> (<ref>, since 1.25)`, for a test that asserts the older behaviour. */
export function beforeNote(version: KubeVersion, id: BehaviourId): string {
  const b: Behaviour = BEHAVIOURS[id];
  if (!b.before) throw new Error(`version gate ${id} has no well-defined older behaviour: skip with gateNote instead`);
  return `asserts the ${releaseName(version)} behaviour: ${b.before} (${b.ref}, since ${b.since})`;
}

/** The annotation type of a test that asserted an older release's behaviour (see {@link gatesFor}). */
export const VERSION_GATE_ANNOTATION = 'version-gate';

/** The part of vitest's TestContext a gate uses. */
export interface GateContext {
  annotate(message: string, type?: string): Promise<unknown>;
  skip(note?: string): void;
}

/** The gates of one server: what `Cluster.has` and `Cluster.require` do. */
export interface Gates {
  /**
   * Whether the server has behaviour `id`. When it does not, annotates the test with
   * {@link beforeNote} (type {@link VERSION_GATE_ANNOTATION}): the test then asserts the older
   * behaviour, and the run counts it as such.
   */
  has(ctx: GateContext, id: BehaviourId): Promise<boolean>;
  /** Skips the test with {@link gateNote} unless the server has behaviour `id`. */
  require(ctx: GateContext, id: BehaviourId): void;
}

/** The gates of a server of `version`. */
export function gatesFor(version: KubeVersion): Gates {
  return {
    async has(ctx, id) {
      if (hasBehaviour(version, id)) return true;
      await ctx.annotate(beforeNote(version, id), VERSION_GATE_ANNOTATION);
      return false;
    },
    require(ctx, id) {
      if (!hasBehaviour(version, id)) ctx.skip(gateNote(version, id));
    },
  };
}

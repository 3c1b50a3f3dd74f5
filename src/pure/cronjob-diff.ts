/**
 * Desired-versus-observed comparison of the child CronJob.
 *
 * The controller owns the child's whole `spec` (the pod template above all: whatever runs there runs with
 * the schedule's volumes and Secrets). Every field of the observed spec must therefore be either one that
 * buildCronJob produced, with the same value, or a field the API server adds by default, with its default
 * value ({@link isServerDefault}); anything else — a hand-added `command`, `hostNetwork`,
 * `serviceAccountName`, `securityContext.privileged`, a field an older spec asked for — is drift and is
 * removed. Comparing against server defaults matters: a deep equality that does not know them never
 * settles and turns into a hot loop of updates (redis-operator#1773, openshift CVO#722).
 *
 * Metadata is compared only where we own it: our labels and annotations (other keys are kept), and our
 * controller ownerReference.
 */
import { compareQuantities, isQuantity, parseQuantity } from '../api/quantity.ts';
import type { KubeObject } from '../kube/object.ts';
import { sameOwner } from './owner-reference.ts';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Whether two scalars are the same value. Under `resources`, and in an emptyDir's `sizeLimit` (the
 * scratch volume's, taken from the ephemeral-storage limit), the server canonicalises quantities
 * (`1000m` is stored as `1`, `1024Mi` as `1Gi`), so quantities compare by value, not by spelling.
 */
function scalarEqual(desired: unknown, observed: unknown, path: readonly string[]): boolean {
  if (desired === observed) return true;
  const quantity = path.includes('resources') || path[path.length - 1] === 'sizeLimit';
  if (quantity && (typeof desired === 'string' || typeof desired === 'number')) {
    // The API's exact Quantity arithmetic (src/api/quantity.ts), not floats: 2^53 + 1 is not 2^53.
    if (typeof observed !== 'string' && typeof observed !== 'number') return false;
    const a = parseQuantity(String(desired));
    const b = parseQuantity(String(observed));
    return isQuantity(a) && isQuantity(b) && compareQuantities(a, b) === 0;
  }
  return false;
}

/** The `name` of a list item such as a container, volume, mount or env var. */
function nameOf(item: unknown): string | undefined {
  return isRecord(item) && typeof item['name'] === 'string' ? item['name'] : undefined;
}

function render(path: readonly string[]): string {
  return path.reduce((out, part) => (/^\d+$/.test(part) ? `${out}[${part}]` : out ? `${out}.${part}` : part), '');
}

const POD_TEMPLATE = 'spec.jobTemplate.spec.template';
const CONTAINERS = `${POD_TEMPLATE}.spec.{containers,initContainers}[]`;

/**
 * The defaults kube-apiserver writes into a CronJob (batch/v1 `SetDefaults_CronJob`, and core/v1
 * `SetDefaults_PodSpec`, `SetDefaults_Container`, volume and port defaults for the pod template, and
 * `SetDefaults_PodFailurePolicyOnPodConditionsPattern`, a per-type defaulter that reaches the template's
 * podFailurePolicy; `SetDefaults_Job` does not apply to `jobTemplate.spec`), by generic path (`[]` for any list index, `{a,b}` for
 * either key). Go also serializes the templates' `creationTimestamp` as null.
 */
export const SERVER_DEFAULTS: ReadonlyMap<string, unknown> = new Map(
  Object.entries({
    'spec.concurrencyPolicy': 'Allow',
    'spec.suspend': false,
    'spec.successfulJobsHistoryLimit': 3,
    'spec.failedJobsHistoryLimit': 1,
    'spec.jobTemplate.metadata.creationTimestamp': null,
    'spec.jobTemplate.spec.podFailurePolicy.rules[].onPodConditions[].status': 'True',
    [`${POD_TEMPLATE}.metadata.creationTimestamp`]: null,
    [`${POD_TEMPLATE}.spec.restartPolicy`]: 'Always',
    [`${POD_TEMPLATE}.spec.terminationGracePeriodSeconds`]: 30,
    [`${POD_TEMPLATE}.spec.dnsPolicy`]: 'ClusterFirst',
    [`${POD_TEMPLATE}.spec.securityContext`]: {},
    [`${POD_TEMPLATE}.spec.schedulerName`]: 'default-scheduler',
    [`${CONTAINERS}.terminationMessagePath`]: '/dev/termination-log',
    [`${CONTAINERS}.terminationMessagePolicy`]: 'File',
    [`${CONTAINERS}.resources`]: {},
    [`${CONTAINERS}.ports[].protocol`]: 'TCP',
    [`${CONTAINERS}.env[].valueFrom.fieldRef.apiVersion`]: 'v1',
    [`${POD_TEMPLATE}.spec.volumes[].{secret,configMap,downwardAPI,projected}.defaultMode`]: 420,
  }).flatMap(([pattern, value]) => expandAlternatives(pattern).map((path) => [path, value] as const)),
);

/** {@link SERVER_DEFAULTS} as JSON text: reconcile compares against them for every field it does not own. */
const SERVER_DEFAULT_JSON: ReadonlyMap<string, string> = new Map([...SERVER_DEFAULTS].map(([path, value]) => [path, JSON.stringify(value)]));

/** `['spec', 'containers', '0', 'image']` → `spec.containers[].image`, the form of {@link SERVER_DEFAULTS}' keys. */
function genericPath(path: readonly string[]): string {
  let out = '';
  for (const part of path) {
    if (isIndex(part)) out += '[]';
    else out += out === '' ? part : `.${part}`;
  }
  return out;
}

/** Whether a path part is a list index (all digits). */
function isIndex(part: string): boolean {
  if (part.length === 0) return false;
  for (let i = 0; i < part.length; i++) {
    const c = part.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** `a.{b,c}.d` → `a.b.d`, `a.c.d`. */
function expandAlternatives(pattern: string): string[] {
  const match = /\{([^}]*)\}/.exec(pattern);
  if (!match) return [pattern];
  return match[1]!.split(',').flatMap((alt) => expandAlternatives(pattern.replace(match[0], alt)));
}

/** The tag `parsers.ParseImageName` finds: `latest` when the image has neither tag nor digest. */
function imageTag(image: string): string {
  const at = image.indexOf('@');
  const name = at >= 0 ? image.slice(0, at) : image;
  const colon = name.lastIndexOf(':');
  const tag = colon > name.lastIndexOf('/') ? name.slice(colon + 1) : '';
  return tag === '' && at < 0 ? 'latest' : tag;
}

/** The `imagePullPolicy` the API server gives a container of `image` (`SetDefaults_Container`). */
export function defaultPullPolicy(image: unknown): 'Always' | 'IfNotPresent' {
  return imageTag(typeof image === 'string' ? image : '') === 'latest' ? 'Always' : 'IfNotPresent';
}

/**
 * Whether `value`, found at `path` of the observed CronJob where the desired one has nothing, is what the
 * API server adds by default there. `parent` is the object holding it (a container's image decides its
 * default pull policy). An object counts when everything in it is a default.
 */
export function isServerDefault(path: readonly string[], value: unknown, parent: Record<string, unknown>): boolean {
  const generic = genericPath(path);
  if (generic.endsWith('.imagePullPolicy') && SERVER_DEFAULTS.has(`${generic.slice(0, -'imagePullPolicy'.length)}terminationMessagePath`)) {
    // Always is also what the AlwaysPullImages admission plugin sets: never worse than the default.
    return value === 'Always' || value === defaultPullPolicy(parent['image']);
  }
  const defaultJson = SERVER_DEFAULT_JSON.get(generic);
  if (defaultJson !== undefined) return defaultJson === JSON.stringify(value);
  // An object the desired CronJob lacks is a default when all it holds is (a template's `metadata`).
  return isRecord(value) && Object.keys(value).length > 0 && Object.entries(value).every(([key, inner]) => isServerDefault([...path, key], inner, value));
}

/** Reports the fields of `value` (found where the desired CronJob has nothing) that are not server defaults, leaf by leaf. */
function reportForeign(path: string[], value: unknown, parent: Record<string, unknown>, out: string[]): void {
  if (isServerDefault(path, value, parent)) return;
  if (!isRecord(value) || Object.keys(value).length === 0) {
    out.push(render(path));
    return;
  }
  for (const [key, inner] of Object.entries(value)) reportForeign([...path, key], inner, value, out);
}

/**
 * Appends to `out` the paths under `path` where `observed` differs from `desired` in a field we own.
 * `path` is one array pushed and popped on the way down (reconcile diffs every child it reads, so the
 * walk allocates no array per field); callees that keep a path copy it.
 */
function diffValue(desired: unknown, observed: unknown, path: string[], out: string[]): void {
  if (Array.isArray(desired)) {
    if (!Array.isArray(observed) || observed.length !== desired.length) {
      out.push(render(path));
      return;
    }
    for (let i = 0; i < desired.length; i++) {
      const item: unknown = desired[i];
      const name = nameOf(item);
      path.push(String(i));
      // Named items (containers, volumes, mounts, env) are another item when the name differs.
      if (name !== undefined && name !== nameOf(observed[i])) out.push(render(path));
      else diffValue(item, observed[i], path, out);
      path.pop();
    }
    return;
  }
  if (isRecord(desired)) {
    if (observed !== undefined && !isRecord(observed)) {
      out.push(render(path));
      return;
    }
    const seen = observed ?? {};
    for (const key of Object.keys(desired)) {
      const value = desired[key];
      if (value === undefined) continue;
      path.push(key);
      diffValue(value, seen[key], path, out);
      path.pop();
    }
    for (const key of Object.keys(seen)) {
      const value = seen[key];
      if (desired[key] !== undefined || value === undefined) continue;
      path.push(key);
      reportForeign(path, value, seen, out);
      path.pop();
    }
    return;
  }
  if (desired === null) {
    if (observed !== null && observed !== undefined) out.push(render(path));
    return;
  }
  if (!scalarEqual(desired, observed, path)) out.push(render(path));
}

/**
 * The paths (`spec.schedule`, `spec.jobTemplate.spec.template.spec.containers[0].image`,
 * `metadata.labels.app.kubernetes.io/name`…) where the observed CronJob differs from the desired one in
 * a field we own. Empty means in sync; server-defaulted and foreign fields never appear.
 */
export function cronJobDrift(observed: KubeObject, desired: KubeObject): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(desired)) {
    if (key === 'metadata' || key === 'status' || key === 'apiVersion' || key === 'kind' || value === undefined) continue;
    diffValue(value, observed[key], [key], out);
  }
  for (const field of ['labels', 'annotations'] as const) {
    for (const [key, value] of Object.entries(desired.metadata[field] ?? {})) {
      if (observed.metadata[field]?.[key] !== value) out.push(`metadata.${field}.${key}`);
    }
  }
  const observedRefs = observed.metadata.ownerReferences ?? [];
  for (const ref of desired.metadata.ownerReferences ?? []) {
    if (!observedRefs.some((have) => sameOwner(have, ref))) out.push(`metadata.ownerReferences[${ref.uid}]`);
  }
  return out;
}

/**
 * The desired value with the server defaults found at the same places of the observed one filled in.
 * Named list items (containers, volumes, mounts, env) take the defaults of their namesake only, never of
 * whatever sat at their index before (a removed volume's source must not be grafted onto the next one).
 */
function withObservedDefaults(desired: unknown, observed: unknown, path: string[]): unknown {
  if (Array.isArray(desired)) {
    const have = Array.isArray(observed) ? observed : [];
    return desired.map((item, i) => {
      const name = nameOf(item);
      return withObservedDefaults(item, name === undefined ? have[i] : have.find((h) => nameOf(h) === name), [...path, String(i)]);
    });
  }
  if (!isRecord(desired)) return desired;
  const merged: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(desired)) {
    if (value !== undefined) merged[key] = withObservedDefaults(value, isRecord(observed) ? observed[key] : undefined, [...path, key]);
  }
  if (isRecord(observed)) {
    for (const [key, value] of Object.entries(observed)) {
      if (merged[key] === undefined && value !== undefined && isServerDefault([...path, key], value, observed)) merged[key] = value;
    }
  }
  return merged;
}

/**
 * The observed CronJob healed: the desired `spec` in place of its own, keeping only the server defaults
 * it carries, and our labels, annotations and controller reference merged into its metadata (other
 * writers' metadata is kept, and so are `resourceVersion`, `uid` and the rest of the server's metadata).
 * The controller sends the difference from `observed` to this as a merge patch (src/pure/child-patch.ts).
 * Inputs are not mutated.
 */
export function mergeDesiredIntoObserved<T extends KubeObject>(observed: T, desired: KubeObject): T {
  // A JSON round trip, not structuredClone: cached objects share equal subtrees (src/runtime/string-interner.ts),
  // which structuredClone would keep shared in the copy.
  const merged = JSON.parse(JSON.stringify(observed)) as T;
  const fields: Record<string, unknown> = merged;
  for (const [key, value] of Object.entries(desired)) {
    if (key === 'metadata' || key === 'status' || value === undefined) continue;
    fields[key] = withObservedDefaults(value, fields[key], [key]);
  }
  const meta = merged.metadata;
  if (desired.metadata.labels) meta.labels = { ...meta.labels, ...desired.metadata.labels };
  if (desired.metadata.annotations) meta.annotations = { ...meta.annotations, ...desired.metadata.annotations };
  for (const ref of desired.metadata.ownerReferences ?? []) {
    const refs = meta.ownerReferences ?? [];
    // Kept as it is when it names the same owner through another served version (no needless write).
    if (refs.some((have) => sameOwner(have, ref))) continue;
    // At most one controller reference may exist; ours replaces any stale one with the same uid.
    meta.ownerReferences = [...refs.filter((have) => have.uid !== ref.uid && !(ref.controller && have.controller)), { ...ref }];
  }
  return merged;
}

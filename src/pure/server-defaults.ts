/**
 * The CronJob as the API server will store it: buildCronJob's object plus the fields kube-apiserver
 * adds by default (the table in cronjob-diff.ts, which the drift check uses too). For previews, so a
 * reader sees `dnsPolicy: ClusterFirst` in the output and knows it was not asked for.
 */
import type { CronJob } from './cron-job.ts';
import { defaultPullPolicy, SERVER_DEFAULTS } from './cronjob-diff.ts';

/** One field the API server adds: its path in the object and the value it sets. */
export interface ServerDefault {
  /** Path of the field, list indices as numbers' strings, e.g. `['spec', 'jobTemplate', …, 'containers', '0', 'imagePullPolicy']`. */
  readonly path: readonly string[];
  /** The value the API server writes there. */
  readonly value: unknown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Concrete paths of `object` matching a generic path (`containers[].x`: every container). */
function expand(object: unknown, generic: readonly string[], prefix: readonly string[] = []): { path: string[]; parent: Record<string, unknown> }[] {
  const [head, ...rest] = generic;
  if (head === undefined || !isRecord(object)) return [];
  const list = head.endsWith('[]');
  const key = list ? head.slice(0, -2) : head;
  if (rest.length === 0 && !list) return [{ path: [...prefix, key], parent: object }];
  const child = object[key];
  if (!list) return expand(child, rest, [...prefix, key]);
  if (!Array.isArray(child)) return [];
  return child.flatMap((item, i) => expand(item, rest, [...prefix, key, String(i)]));
}

/**
 * The fields the API server would add to `cronJob` (absent there, with their default value), in a
 * stable order. Null defaults (Go's `creationTimestamp: null` on templates) are serialization noise and
 * left out; `imagePullPolicy` follows the image tag (`Always` for `:latest` or no tag, else `IfNotPresent`).
 */
export function serverDefaultsOf(cronJob: CronJob): ServerDefault[] {
  const out: ServerDefault[] = [];
  for (const [generic, value] of SERVER_DEFAULTS) {
    if (value === null) continue;
    for (const { path, parent } of expand(cronJob, generic.replace(/\[\]/g, '[].').split('.').filter((s) => s !== ''))) {
      const key = path[path.length - 1] ?? '';
      if (parent[key] !== undefined) continue;
      out.push({ path, value });
      if (key === 'terminationMessagePath') {
        if (parent['imagePullPolicy'] === undefined) out.push({ path: [...path.slice(0, -1), 'imagePullPolicy'], value: defaultPullPolicy(parent['image']) });
      }
    }
  }
  return out;
}

/** A deep copy of `cronJob` with the server defaults of {@link serverDefaultsOf} filled in. */
export function withServerDefaults(cronJob: CronJob): CronJob {
  const copy = structuredClone(cronJob) as unknown as Record<string, unknown>;
  for (const { path, value } of serverDefaultsOf(cronJob)) {
    let node: Record<string, unknown> = copy;
    // List indices are strings here, which index arrays as well.
    for (const part of path.slice(0, -1)) node = node[part] as Record<string, unknown>;
    node[path[path.length - 1] ?? ''] = structuredClone(value);
  }
  return copy as unknown as CronJob;
}

import type { KubeObject } from '../../src/kube/object.ts';
import type { Admission } from './owner-reference-admission.ts';
import type { ResourceType } from './resource-type.ts';

/**
 * A field the server does not keep on writes of one kind, as an older kube-apiserver does: a field its
 * Go types lack is pruned while decoding, and one behind a disabled feature gate is cleared by the
 * strategy (`dropDisabledFields`: CronJob `spec.timeZone` before 1.25 or with `CronJobTimeZone` off).
 * The create or update succeeds; the stored object and the response lack the field.
 */
export interface DroppedField {
  /** API group, `''` for core. */
  readonly group: string;
  /** Plural resource, e.g. `cronjobs`. */
  readonly resource: string;
  /** Dotted path; list items by index (`spec.template.spec.containers[0].image` or `…containers.0.image`). */
  readonly path: string;
}

/**
 * A mutating admission webhook that sets one field on every create and update of one kind (a Kyverno or
 * Gatekeeper mutation, a platform team's defaults), after defaulting and before validation, as
 * kube-apiserver's MutatingAdmissionWebhook plugin runs.
 */
export interface FieldMutation extends DroppedField {
  /** The value written at `path` (any JSON value). */
  readonly value: unknown;
}

function segments(path: string): string[] {
  return path.replace(/\[(\d+)\]/g, '.$1').split('.').filter((s) => s !== '');
}

function parent(obj: KubeObject, parts: readonly string[], create: boolean): Record<string, unknown> | undefined {
  let cur: unknown = obj;
  for (const part of parts.slice(0, -1)) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    const record = cur as Record<string, unknown>;
    if (record[part] === undefined && create) record[part] = {};
    cur = record[part];
  }
  return typeof cur === 'object' && cur !== null ? (cur as Record<string, unknown>) : undefined;
}

/**
 * Parses `<group>/<resource>:<path>` (`batch/cronjobs:spec.timeZone`; core kinds as `/configmaps:data.x`
 * or `configmaps:data.x`) and, with `withValue`, a trailing `=<JSON>` (a bare word is taken as a string).
 * Throws an Error naming the problem.
 */
export function parseFieldSpec(spec: string, withValue: true): FieldMutation;
export function parseFieldSpec(spec: string, withValue: false): DroppedField;
export function parseFieldSpec(spec: string, withValue: boolean): DroppedField | FieldMutation {
  const colon = spec.indexOf(':');
  if (colon < 0) throw new Error(`field spec ${JSON.stringify(spec)}: expected <group>/<resource>:<path>${withValue ? '=<value>' : ''}`);
  const kind = spec.slice(0, colon);
  let path = spec.slice(colon + 1);
  let value: unknown;
  if (withValue) {
    const eq = path.indexOf('=');
    if (eq < 0) throw new Error(`field spec ${JSON.stringify(spec)}: expected =<value> after the path`);
    const raw = path.slice(eq + 1);
    path = path.slice(0, eq);
    try {
      value = JSON.parse(raw);
    } catch {
      value = raw;
    }
  }
  const slash = kind.lastIndexOf('/');
  const group = slash < 0 ? '' : kind.slice(0, slash);
  const resource = kind.slice(slash + 1);
  if (!/^[a-z0-9]+$/.test(resource)) throw new Error(`field spec ${JSON.stringify(spec)}: ${JSON.stringify(resource)} is not a plural resource name`);
  if (segments(path).length === 0) throw new Error(`field spec ${JSON.stringify(spec)}: the path is empty`);
  return withValue ? { group, resource, path, value } : { group, resource, path };
}

/**
 * The admission step applying `dropped` and `mutations` to writes of `type` (main resource only:
 * status writes keep the stored spec anyway), or undefined when none applies.
 */
export function fieldRewriteAdmission(type: ResourceType, dropped: readonly DroppedField[], mutations: readonly FieldMutation[]): Admission | undefined {
  const matches = (f: DroppedField): boolean => f.group === type.group && f.resource === type.resource;
  const drops = dropped.filter(matches).map((f) => segments(f.path));
  const sets = mutations.filter(matches).map((m) => ({ parts: segments(m.path), value: m.value }));
  if (drops.length === 0 && sets.length === 0) return undefined;
  return (obj) => {
    for (const parts of drops) {
      const holder = parent(obj, parts, false);
      if (holder) delete holder[parts[parts.length - 1] ?? ''];
    }
    for (const { parts, value } of sets) {
      const holder = parent(obj, parts, true);
      if (holder) holder[parts[parts.length - 1] ?? ''] = structuredClone(value);
    }
  };
}

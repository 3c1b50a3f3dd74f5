/**
 * The second half of a validation message: what to write instead. Each function returns a suffix that
 * validate.ts appends to the message it already had (`; did you mean "retention"?`), so a message still
 * starts with what the API server would say, and tests or tools matching that start keep matching.
 */
import { GROUP_VERSION, GROUP_VERSION_V1, type ServedGroupVersion } from './constants.ts';
import { nearestNames, quotedAlternatives } from './nearest-names.ts';
import { backupScheduleSchema, type SchemaNode } from './schema.ts';
import { backupScheduleV1Schema } from './schema-v1.ts';
import { TIME_ZONE_NAMES } from './time-zone-names.ts';

const SCHEMAS: Readonly<Record<ServedGroupVersion, SchemaNode>> = { [GROUP_VERSION]: backupScheduleSchema, [GROUP_VERSION_V1]: backupScheduleV1Schema };

/** Whether `schema` has the dotted `field` (`spec.retention.keepDaily`, `spec.source.etcd.endpoints[0]`). */
function hasField(schema: SchemaNode, field: string): boolean {
  let node: SchemaNode | undefined = schema;
  for (const match of field.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) {
    if (node === undefined) return false;
    const next: unknown = match[2] === undefined ? (node['properties'] as Record<string, unknown> | undefined)?.[match[1] ?? ''] : node['items'];
    node = next !== null && typeof next === 'object' ? (next as SchemaNode) : undefined;
  }
  return node !== undefined;
}

/**
 * For `field: is not a known field` in `groupVersion`: the served version that has the field (a v1 field
 * in a v1alpha1 object means the apiVersion is the mistake, not the field), else the nearest of the
 * `known` names at that level (`spec.retension` → `retention`). Empty when neither helps.
 */
export function unknownFieldHint(field: string, known: readonly string[], groupVersion: string): string {
  const other = (Object.keys(SCHEMAS) as ServedGroupVersion[]).find((version) => version !== groupVersion && hasField(SCHEMAS[version], field));
  if (other !== undefined) return `; this is a ${other.split('/')[1] ?? other} field: set apiVersion: ${other}`;
  const name = field.slice(field.lastIndexOf('.') + 1);
  const near = nearestNames(name, known);
  return near.length === 0 ? '' : `; did you mean ${quotedAlternatives(near)}?`;
}

/** Beyond this many values an enum message names the nearest ones instead of all of them. */
const MAX_LISTED_VALUES = 10;

/**
 * The problem of a value outside an enum: all the allowed values when there are few, else the nearest
 * (the editor schema's `spec.timeZone` enum has ~600 names: listing them made a 10,968-character message).
 */
export function enumProblem(value: unknown, allowed: readonly unknown[]): string {
  if (allowed.length <= MAX_LISTED_VALUES) return `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}`;
  const near = typeof value === 'string' ? nearestNames(value, allowed.filter((v): v is string => typeof v === 'string')) : [];
  return `must be one of ${allowed.length} allowed values, got ${JSON.stringify(value)}${near.length === 0 ? '' : `; did you mean ${quotedAlternatives(near)}?`}`;
}

/** The hint after an unknown time zone: the nearest IANA names (at most 3), or where the names come from. */
export function timeZoneHint(name: string): string {
  // Up to a third of the name may differ: `America/Argentina_Buenos_Aires` is one character from the real name.
  const names = [...TIME_ZONE_NAMES, 'UTC'];
  let near = nearestNames(name, names);
  // A city without its region (`Berlin`, `new_york`) is far from `Europe/Berlin` by edits but obvious.
  if (near.length === 0) near = names.filter((n) => n.slice(n.lastIndexOf('/') + 1).toLowerCase() === name.toLowerCase()).slice(0, 3);
  return near.length === 0 ? '; use an IANA name such as "Europe/Berlin" (case-sensitive)' : `; did you mean ${quotedAlternatives(near)}? (IANA names, case-sensitive)`;
}

/** Byte units people write that Kubernetes spells differently, lower-cased, to [binary, decimal] suffix. */
const UNIT_SPELLINGS: Readonly<Record<string, readonly [string, string]>> = {
  k: ['Ki', 'k'], kb: ['Ki', 'k'], kib: ['Ki', 'Ki'], ki: ['Ki', 'Ki'],
  m: ['Mi', 'M'], mb: ['Mi', 'M'], mib: ['Mi', 'Mi'], mi: ['Mi', 'Mi'],
  g: ['Gi', 'G'], gb: ['Gi', 'G'], gib: ['Gi', 'Gi'], gi: ['Gi', 'Gi'],
  t: ['Ti', 'T'], tb: ['Ti', 'T'], tib: ['Ti', 'Ti'], ti: ['Ti', 'Ti'],
  p: ['Pi', 'P'], pb: ['Pi', 'P'], pib: ['Pi', 'Pi'], pi: ['Pi', 'Pi'],
  e: ['Ei', 'E'], eb: ['Ei', 'E'], eib: ['Ei', 'Ei'], ei: ['Ei', 'Ei'],
};
const POWERS: Readonly<Record<string, string>> = { Ki: '2^10', Mi: '2^20', Gi: '2^30', Ti: '2^40', Pi: '2^50', Ei: '2^60', k: '10^3', M: '10^6', G: '10^9', T: '10^12', P: '10^15', E: '10^18' };

/**
 * The hint after a quantity kube-apiserver cannot parse: the Kubernetes spelling of what was meant
 * (`512MB` → `"512Mi" (2^20) or "512M" (10^6)`, `1 Gi` → `"1Gi"`, `100b` → `"100"`), else the form.
 */
export function quantityHint(text: string): string {
  const match = /^\s*([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))\s*([A-Za-z]*)\s*$/.exec(text);
  const [, number = '', unit = ''] = match ?? [];
  const lower = unit.toLowerCase();
  const spellings = UNIT_SPELLINGS[lower];
  let candidates: string[] = [];
  if (match !== null && (lower === 'b' || lower === 'byte' || lower === 'bytes' || unit === '')) candidates = [number];
  else if (match !== null && spellings !== undefined) candidates = [...new Set(spellings)].map((suffix) => `${number}${suffix}`);
  candidates = candidates.filter((c) => c !== text);
  if (candidates.length === 0) {
    // Written in the quantity form but out of range (`1e9999999999`): the parser's reason says it all.
    if (/^[+-]?[0-9.]+[eEinumkKMGTP]*[-+]?[0-9]*$/.test(text)) return '';
    return '; write a number with an optional suffix, e.g. "512Mi", "1Gi" or "500m"';
  }
  const described = candidates.map((c) => {
    const power = POWERS[c.slice(number.length)];
    return `${JSON.stringify(c)}${candidates.length > 1 && power !== undefined ? ` (${power})` : ''}`;
  });
  return `; did you mean ${described.length === 1 ? (described[0] ?? '') : `${described.slice(0, -1).join(', ')} or ${described.at(-1) ?? ''}`}?`;
}

/**
 * CRD validation ratcheting (KEP-4008; beta and on by default since Kubernetes 1.30, GA in 1.33): on
 * an update, a schema error at a field whose value did not change is not reported, so an object that
 * became invalid (a tightened schema, a restore, a write past validation) can still be updated, and
 * its status written, as long as the update does not touch the invalid parts.
 */
import type { StatusCause } from '../../../src/kube/object.ts';
import { jsonEqual } from '../json-equal.ts';

const MISSING = Symbol('missing');

/** The value at a cause's field path (`spec.source.etcd.endpoints[0]`), or MISSING. */
function valueAt(obj: unknown, field: string): unknown {
  let node: unknown = obj;
  for (const part of field.split(/\.|(?=\[)/)) {
    if (part === '') continue;
    const index = /^\[(\d+)\]$/.exec(part);
    if (index) {
      if (!Array.isArray(node)) return MISSING;
      node = node[Number(index[1])];
    } else {
      if (node === null || typeof node !== 'object' || !(part in node)) return MISSING;
      node = (node as Record<string, unknown>)[part];
    }
    if (node === undefined) return MISSING;
  }
  return node;
}

/**
 * The causes that survive ratcheting: those at a field whose value changed between `old` and `obj`
 * (or that cannot be located). The "rules were not checked" cause goes when nothing else is left.
 */
export function ratchetCauses(causes: readonly StatusCause[], obj: unknown, old: unknown): StatusCause[] {
  const kept = causes.filter((c) => {
    if (!c.field || c.field === '<nil>') return true;
    const now = valueAt(obj, c.field);
    const before = valueAt(old, c.field);
    // A field missing in both (a required field never set) is unchanged too.
    return !(now === before || (now !== MISSING && before !== MISSING && jsonEqual(now, before)));
  });
  return kept.every((c) => c.field === '<nil>') ? [] : kept;
}

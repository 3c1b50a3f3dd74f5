import type { KubeObject } from '../../src/kube/object.ts';

/** A compiled selector: true when the object matches. */
export type ObjectPredicate = (obj: KubeObject) => boolean;

/** A selector that could not be parsed; the message is the Kubernetes one, answered as 400 BadRequest. */
export class SelectorError extends Error {
  override readonly name = 'SelectorError';
}

/** Splits on commas that are not inside `( )`. */
function splitTerms(selector: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of selector) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      terms.push(current);
      current = '';
    } else current += ch;
  }
  terms.push(current);
  return terms.map((t) => t.trim()).filter((t) => t !== '');
}

const KEY = String.raw`[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?`;
const VALUE = String.raw`(?:[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?`;
const SET_RE = new RegExp(`^(${KEY})\\s+(in|notin)\\s*\\(([^)]*)\\)$`);
const EQ_RE = new RegExp(`^(${KEY})\\s*(==|=|!=)\\s*(${VALUE})$`);
const CMP_RE = new RegExp(`^(${KEY})\\s*(<|>)\\s*(-?\\d+)$`);
const EXISTS_RE = new RegExp(`^(!?)\\s*(${KEY})$`);

function labelTerm(term: string): (labels: Record<string, string>) => boolean {
  let m = SET_RE.exec(term);
  if (m) {
    const key = m[1] as string;
    const values = new Set((m[4] ?? '').split(',').map((v) => v.trim()).filter((v) => v !== ''));
    if (values.size === 0) throw new SelectorError(`unable to parse requirement: values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty`);
    return m[3] === 'in' ? (l) => key in l && values.has(l[key] as string) : (l) => !(key in l) || !values.has(l[key] as string);
  }
  m = EQ_RE.exec(term);
  if (m) {
    const key = m[1] as string;
    const value = m[4] ?? '';
    return m[3] === '!=' ? (l) => l[key] !== value : (l) => key in l && l[key] === value;
  }
  m = CMP_RE.exec(term);
  if (m) {
    const key = m[1] as string;
    const bound = Number(m[4]);
    const gt = m[3] === '>';
    return (l) => {
      const v = l[key];
      if (v === undefined || !/^-?\d+$/.test(v)) return false;
      return gt ? Number(v) > bound : Number(v) < bound;
    };
  }
  m = EXISTS_RE.exec(term);
  if (m) {
    const key = m[2] as string;
    return m[1] === '!' ? (l) => !(key in l) : (l) => key in l;
  }
  throw new SelectorError(`unable to parse requirement: found '${term}', expected: in, notin, =, ==, !=, gt, lt`);
}

/** Compiles a `labelSelector` query parameter (kube `labels.Parse` syntax). */
export function parseLabelSelector(selector: string | null): ObjectPredicate | undefined {
  if (!selector || selector.trim() === '') return undefined;
  const terms = splitTerms(selector).map(labelTerm);
  return (obj) => {
    const labels = obj.metadata.labels ?? {};
    return terms.every((t) => t(labels));
  };
}

/** Reads a dotted field path from an object (`involvedObject.name`). */
function fieldValue(obj: KubeObject, path: string): string {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return '';
    cur = (cur as Record<string, unknown>)[part];
  }
  if (cur === undefined || cur === null) return '';
  return String(cur);
}

/** Field selectors a resource supports besides metadata.name / metadata.namespace (kube `GetAttrs`). */
const EXTRA_FIELDS: Record<string, readonly string[]> = {
  '/events': [
    'involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name', 'involvedObject.uid', 'involvedObject.apiVersion',
    'involvedObject.resourceVersion', 'involvedObject.fieldPath', 'reason', 'reportingComponent', 'source', 'type',
  ],
  'events.k8s.io/events': [
    'regarding.kind', 'regarding.namespace', 'regarding.name', 'regarding.uid', 'regarding.apiVersion',
    'regarding.resourceVersion', 'regarding.fieldPath', 'reason', 'reportingController', 'type',
  ],
  '/namespaces': ['status.phase'],
  '/secrets': ['type'],
  'batch/jobs': ['status.successful'],
};

/** Compiles a `fieldSelector` for the resource `gr` (`group/resource`). */
export function parseFieldSelector(selector: string | null, gr: string): ObjectPredicate | undefined {
  if (!selector || selector.trim() === '') return undefined;
  const allowed = new Set(['metadata.name', 'metadata.namespace', ...(EXTRA_FIELDS[gr] ?? [])]);
  const terms = splitTerms(selector).map((term) => {
    const m = /^([^!=]+?)\s*(==|=|!=)\s*(.*)$/.exec(term);
    if (!m) throw new SelectorError(`invalid selector: '${selector}'; can't understand '${term}'`);
    const field = m[1] as string;
    if (!allowed.has(field)) throw new SelectorError(`field label not supported: ${field}`);
    const value = m[3] ?? '';
    const negate = m[2] === '!=';
    return (obj: KubeObject) => (fieldValue(obj, field) === value) !== negate;
  });
  return (obj) => terms.every((t) => t(obj));
}

/** Both selectors as one predicate (undefined when neither is set). */
export function combinePredicates(...preds: (ObjectPredicate | undefined)[]): ObjectPredicate | undefined {
  const set = preds.filter((p): p is ObjectPredicate => p !== undefined);
  if (set.length === 0) return undefined;
  if (set.length === 1) return set[0];
  return (obj) => set.every((p) => p(obj));
}

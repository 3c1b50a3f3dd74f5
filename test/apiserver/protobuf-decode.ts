/**
 * Just enough of the Kubernetes protobuf encoding to accept what `kubectl create namespace|configmap|
 * secret|serviceaccount|role|rolebinding|clusterrole|clusterrolebinding|token|deployment|job|cronjob`
 * and `kubectl auth can-i|whoami` send (`Content-Type: application/vnd.kubernetes.protobuf`): the
 * `k8s\0` envelope (runtime.Unknown), hand-written field tables for the small kinds, and the
 * generated descriptors of `protobuf/` for ObjectMeta and the workload kinds.
 * Any other kind answers 415, as a server without that kind's protobuf codec would.
 */
import { fields, type Fields } from './protobuf/wire.ts';
import { decodeTyped, decodeTypedKind } from './protobuf/decode-typed.ts';

const str = (f: Fields, n: number): string | undefined => {
  const v = f.get(n)?.[0];
  return Buffer.isBuffer(v) ? v.toString('utf8') : undefined;
};
const strs = (f: Fields, n: number): string[] => (f.get(n) ?? []).filter(Buffer.isBuffer).map((b) => b.toString('utf8'));
const msg = (f: Fields, n: number): Fields | undefined => {
  const v = f.get(n)?.[0];
  return Buffer.isBuffer(v) ? fields(v) : undefined;
};
const bool = (f: Fields, n: number): boolean | undefined => {
  const v = f.get(n)?.[0];
  return typeof v === 'number' ? v !== 0 : undefined;
};
function map(f: Fields, n: number, bytes = false): Record<string, string> | undefined {
  const entries = f.get(n);
  if (!entries) return undefined;
  const out: Record<string, string> = {};
  for (const e of entries) {
    if (!Buffer.isBuffer(e)) continue;
    const kv = fields(e);
    const value = kv.get(2)?.[0];
    out[str(kv, 1) ?? ''] = Buffer.isBuffer(value) ? (bytes ? value.toString('base64') : value.toString('utf8')) : '';
  }
  return out;
}

function objectMeta(f: Fields | undefined): Record<string, unknown> {
  return f ? decodeTyped('metav1.ObjectMeta', f) : {};
}

/** Decodes a protobuf request body into the JSON object, or undefined when the kind is not supported. */
export function decodeKubernetesProtobuf(body: Buffer): Record<string, unknown> | undefined {
  if (body.length < 4 || body.subarray(0, 4).toString('latin1') !== 'k8s\u0000') return undefined;
  const unknown = fields(body.subarray(4));
  const typeMeta = msg(unknown, 1);
  const raw = unknown.get(2)?.[0];
  if (!typeMeta || !Buffer.isBuffer(raw)) return undefined;
  const apiVersion = str(typeMeta, 1) ?? '';
  const kind = str(typeMeta, 2) ?? '';
  const typed = decodeTypedKind(apiVersion, kind, raw);
  if (typed) return typed;
  const f = fields(raw);
  if (apiVersion === 'authentication.k8s.io/v1' && kind === 'TokenRequest') return decodeTokenRequest(apiVersion, kind, f);
  if (apiVersion === 'authorization.k8s.io/v1' || apiVersion === 'authentication.k8s.io/v1') return decodeReview(apiVersion, kind, f);
  if (apiVersion === 'rbac.authorization.k8s.io/v1') return decodeRbac(apiVersion, kind, f);
  if (apiVersion !== 'v1') return undefined;
  const obj: Record<string, unknown> = { apiVersion, kind, metadata: objectMeta(msg(f, 1)) };
  switch (kind) {
    case 'Namespace': {
      const finalizers = strs(msg(f, 2) ?? new Map(), 1);
      if (finalizers.length) obj['spec'] = { finalizers };
      return obj;
    }
    case 'ConfigMap': {
      const data = map(f, 2);
      const binaryData = map(f, 3, true);
      if (data) obj['data'] = data;
      if (binaryData) obj['binaryData'] = binaryData;
      if (bool(f, 4) !== undefined) obj['immutable'] = bool(f, 4);
      return obj;
    }
    case 'Secret': {
      const data = map(f, 2, true);
      if (data) obj['data'] = data;
      if (str(f, 3) !== undefined) obj['type'] = str(f, 3);
      if (bool(f, 5) !== undefined) obj['immutable'] = bool(f, 5);
      return obj;
    }
    case 'ServiceAccount': {
      const pulls = (f.get(3) ?? []).filter(Buffer.isBuffer).map((b) => ({ name: str(fields(b), 1) ?? '' }));
      if (pulls.length) obj['imagePullSecrets'] = pulls;
      if (bool(f, 4) !== undefined) obj['automountServiceAccountToken'] = bool(f, 4);
      return obj;
    }
    default:
      return undefined;
  }
}

/** SelfSubjectAccessReview / SubjectAccessReview / LocalSubjectAccessReview / SelfSubjectRulesReview / SelfSubjectReview. */
function decodeReview(apiVersion: string, kind: string, f: Fields): Record<string, unknown> | undefined {
  const obj: Record<string, unknown> = { apiVersion, kind, metadata: objectMeta(msg(f, 1)) };
  if (kind === 'SelfSubjectReview') return obj;
  if (kind === 'SelfSubjectRulesReview') {
    const namespace = str(msg(f, 2) ?? new Map(), 1);
    obj['spec'] = namespace ? { namespace } : {};
    return obj;
  }
  if (!['SelfSubjectAccessReview', 'SubjectAccessReview', 'LocalSubjectAccessReview'].includes(kind)) return undefined;
  const spec = msg(f, 2) ?? new Map();
  const out: Record<string, unknown> = {};
  const ra = msg(spec, 1);
  if (ra) {
    const names = ['namespace', 'verb', 'group', 'version', 'resource', 'subresource', 'name'];
    out['resourceAttributes'] = Object.fromEntries(names.map((n, i) => [n, str(ra, i + 1)]).filter(([, v]) => v !== undefined));
  }
  const nra = msg(spec, 2);
  if (nra) out['nonResourceAttributes'] = { path: str(nra, 1), verb: str(nra, 2) };
  if (kind !== 'SelfSubjectAccessReview') {
    if (str(spec, 3) !== undefined) out['user'] = str(spec, 3);
    const groups = strs(spec, 4);
    if (groups.length) out['groups'] = groups;
  }
  obj['spec'] = out;
  return obj;
}

/** TokenRequest (`kubectl create token`): spec.audiences = 1, boundObjectRef = 3, expirationSeconds = 4. */
function decodeTokenRequest(apiVersion: string, kind: string, f: Fields): Record<string, unknown> {
  const spec = msg(f, 2) ?? new Map();
  const out: Record<string, unknown> = {};
  const audiences = strs(spec, 1);
  if (audiences.length) out['audiences'] = audiences;
  const ref = msg(spec, 3);
  if (ref) out['boundObjectRef'] = Object.fromEntries(['kind', 'apiVersion', 'name', 'uid'].map((n, i) => [n, str(ref, i + 1)]).filter(([, v]) => v !== undefined && v !== ''));
  const expiration = spec.get(4)?.[0];
  if (typeof expiration === 'number') out['expirationSeconds'] = expiration;
  return { apiVersion, kind, metadata: objectMeta(msg(f, 1)), spec: out };
}

/** Role, ClusterRole (rules), RoleBinding, ClusterRoleBinding (subjects, roleRef) of rbac.authorization.k8s.io/v1. */
function decodeRbac(apiVersion: string, kind: string, f: Fields): Record<string, unknown> | undefined {
  const obj: Record<string, unknown> = { apiVersion, kind, metadata: objectMeta(msg(f, 1)) };
  const pick = (m: Fields, names: readonly string[]): Record<string, unknown> =>
    Object.fromEntries(names.map((n, i) => [n, str(m, i + 1)]).filter(([, v]) => v !== undefined));
  if (kind === 'Role' || kind === 'ClusterRole') {
    obj['rules'] = (f.get(2) ?? []).filter(Buffer.isBuffer).map((b) => {
      const r = fields(b);
      const rule: Record<string, string[]> = {};
      ['verbs', 'apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'].forEach((n, i) => {
        const v = strs(r, i + 1);
        if (v.length) rule[n] = v;
      });
      return rule;
    });
    return obj;
  }
  if (kind === 'RoleBinding' || kind === 'ClusterRoleBinding') {
    const subjects = (f.get(2) ?? []).filter(Buffer.isBuffer).map((b) => {
      const subject = pick(fields(b), ['kind', 'apiGroup', 'name', 'namespace']);
      // apiGroup and namespace are omitempty in JSON.
      for (const k of ['apiGroup', 'namespace']) if (subject[k] === '') delete subject[k];
      return subject;
    });
    if (subjects.length) obj['subjects'] = subjects;
    obj['roleRef'] = pick(msg(f, 3) ?? new Map(), ['apiGroup', 'kind', 'name']);
    return obj;
  }
  return undefined;
}

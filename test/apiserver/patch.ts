/**
 * The PATCH content types kube-apiserver accepts: RFC 7386 merge patch, RFC 6902 JSON patch, and a
 * strategic merge patch that merges the well-known keyed lists (containers by name, ports by
 * containerPort…) as the built-in types' `patchMergeKey` tags declare.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A JSON patch operation failed (test mismatch, missing path): the API server answers 422. */
export class PatchApplyError extends Error {
  override readonly name = 'PatchApplyError';
}

function isObject(v: unknown): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** RFC 7386 JSON merge patch. Returns a new document; `target` is not modified. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** `patchMergeKey`s of built-in list fields (k8s.io/api struct tags). */
export const MERGE_KEYS: Readonly<Record<string, string>> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  volumes: 'name',
  env: 'name',
  ports: 'containerPort',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  imagePullSecrets: 'name',
  hostAliases: 'ip',
  conditions: 'type',
  ownerReferences: 'uid',
  tolerations: 'key',
};
/** Primitive lists whose strategy is `merge` (set union). */
export const MERGE_PRIMITIVE_LISTS: ReadonlySet<string> = new Set(['finalizers']);

function strategicList(field: string, target: unknown, patch: Json[]): unknown {
  const key = MERGE_KEYS[field];
  if (MERGE_PRIMITIVE_LISTS.has(field) && Array.isArray(target)) {
    const out = [...target];
    for (const v of patch) if (!out.some((t) => JSON.stringify(t) === JSON.stringify(v))) out.push(v);
    return out;
  }
  if (!key || !Array.isArray(target) || !patch.every(isObject)) return patch.filter((v) => !(isObject(v) && v['$patch'] !== undefined));
  if (patch.some((p) => isObject(p) && p['$patch'] === 'replace')) return patch.filter((p) => !(isObject(p) && p['$patch'] === 'replace'));
  const out: unknown[] = [...target];
  for (const item of patch as Record<string, Json>[]) {
    const idx = out.findIndex((t) => isObject(t) && t[key] === item[key]);
    if (item['$patch'] === 'delete') {
      if (idx >= 0) out.splice(idx, 1);
      continue;
    }
    if (idx >= 0) out[idx] = strategicMergePatch(out[idx], item);
    else out.push(strategicMergePatch(undefined, item));
  }
  return out;
}

/** Strategic merge patch for built-in kinds: merge patch plus keyed list merging and `$patch` directives. */
export function strategicMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  if (patch['$patch'] === 'replace') {
    const { $patch: _ignored, ...rest } = patch;
    return rest;
  }
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch' || k.startsWith('$setElementOrder/') || k.startsWith('$deleteFromPrimitiveList/') || k === '$retainKeys') continue;
    if (v === null) delete out[k];
    else if (Array.isArray(v)) out[k] = strategicList(k, out[k], v);
    else out[k] = strategicMergePatch(out[k], v);
  }
  for (const [k, v] of Object.entries(patch)) {
    if (!k.startsWith('$deleteFromPrimitiveList/') || !Array.isArray(v)) continue;
    const field = k.slice('$deleteFromPrimitiveList/'.length);
    const list = out[field];
    if (Array.isArray(list)) out[field] = list.filter((x) => !v.some((d) => JSON.stringify(d) === JSON.stringify(x)));
  }
  return out;
}

function unescapePointer(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}

function parsePointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new PatchApplyError(`invalid JSON pointer: "${path}"`);
  return path.slice(1).split('/').map(unescapePointer);
}

function getParent(doc: unknown, tokens: string[], path: string): { parent: Record<string, unknown> | unknown[]; key: string } {
  let cur: unknown = doc;
  for (const t of tokens.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[Number(t)];
    else if (isObject(cur)) cur = cur[t];
    else cur = undefined;
    if (cur === undefined) throw new PatchApplyError(`doc is missing path: "${path}": missing value`);
  }
  if (!Array.isArray(cur) && !isObject(cur)) throw new PatchApplyError(`doc is missing path: "${path}": missing value`);
  return { parent: cur, key: tokens[tokens.length - 1] as string };
}

function getAt(doc: unknown, path: string): unknown {
  let cur: unknown = doc;
  for (const t of parsePointer(path)) {
    if (Array.isArray(cur)) cur = cur[Number(t)];
    else if (isObject(cur)) cur = cur[t];
    else return undefined;
  }
  return cur;
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** One RFC 6902 operation. */
interface JsonPatchOp {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

/** RFC 6902 JSON patch on a deep copy of `target`. */
export function jsonPatch(target: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) throw new PatchApplyError('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  let doc: unknown = structuredClone(target);
  for (const raw of ops as JsonPatchOp[]) {
    if (!isObject(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string') throw new PatchApplyError('invalid JSON patch operation');
    const tokens = parsePointer(raw.path);
    const set = (value: unknown, insert: boolean): void => {
      if (tokens.length === 0) {
        doc = value;
        return;
      }
      const { parent, key } = getParent(doc, tokens, raw.path);
      if (Array.isArray(parent)) {
        const idx = key === '-' ? parent.length : Number(key);
        if (!Number.isInteger(idx) || idx < 0 || idx > parent.length) throw new PatchApplyError(`Unable to access invalid index: ${key}`);
        if (insert) parent.splice(idx, 0, value);
        else parent[idx] = value;
      } else (parent as Record<string, unknown>)[key] = value;
    };
    const remove = (): unknown => {
      const { parent, key } = getParent(doc, tokens, raw.path);
      if (Array.isArray(parent)) {
        const idx = Number(key);
        if (!Number.isInteger(idx) || idx < 0 || idx >= parent.length) throw new PatchApplyError(`Unable to remove nonexistent key: ${key}: missing value`);
        return parent.splice(idx, 1)[0];
      }
      if (!(key in parent)) throw new PatchApplyError(`Unable to remove nonexistent key: ${key}: missing value`);
      const old = (parent as Record<string, unknown>)[key];
      delete (parent as Record<string, unknown>)[key];
      return old;
    };
    switch (raw.op) {
      case 'add': set(structuredClone(raw.value), true); break;
      case 'replace':
        if (getAt(doc, raw.path) === undefined) throw new PatchApplyError(`replace operation does not apply: doc is missing key: ${raw.path}: missing value`);
        set(structuredClone(raw.value), false);
        break;
      case 'remove': remove(); break;
      case 'move': {
        const from = raw.from ?? '';
        const value = getAt(doc, from);
        if (value === undefined) throw new PatchApplyError(`move operation does not apply: doc is missing from path: ${from}: missing value`);
        doc = jsonPatch(doc, [{ op: 'remove', path: from }]);
        set(value, true);
        break;
      }
      case 'copy': {
        const value = getAt(doc, raw.from ?? '');
        if (value === undefined) throw new PatchApplyError(`copy operation does not apply: doc is missing from path: ${raw.from ?? ''}: missing value`);
        set(structuredClone(value), true);
        break;
      }
      case 'test':
        if (!deepEqual(getAt(doc, raw.path), raw.value)) throw new PatchApplyError(`testing value ${raw.path} failed: test failed`);
        break;
      default: throw new PatchApplyError(`Unexpected kind: ${raw.op}`);
    }
  }
  return doc;
}

/**
 * The `scale` subresource of Deployments (`kubectl scale`, the HorizontalPodAutoscaler): an
 * autoscaling/v1 `Scale` view of `spec.replicas`, read with GET and written with PUT or a merge, JSON
 * or strategic merge patch (pkg/registry/apps/deployment/storage `ScaleREST`).
 */
import { statusErrors } from '../../../src/kube/api-status-error.ts';
import type { KubeObject } from '../../../src/kube/object.ts';
import { fail, serverErrors } from '../errors.ts';
import { sendJson } from '../http-io.ts';
import { cloneJson } from '../json-equal.ts';
import { jsonPatch, mergePatch, PatchApplyError, strategicMergePatch } from '../patch.ts';
import type { WriteOptions } from '../registry-store.ts';
import type { ResourceRequest, ServerContext } from '../server-context.ts';

/** `metav1.FormatLabelSelector` of a LabelSelector: `app=x,tier in (a,b)`. */
function formatSelector(selector: unknown): string {
  if (typeof selector !== 'object' || selector === null) return '';
  const s = selector as { matchLabels?: Record<string, string>; matchExpressions?: Array<{ key: string; operator: string; values?: string[] }> };
  const parts = Object.keys(s.matchLabels ?? {}).sort().map((k) => `${k}=${s.matchLabels?.[k] ?? ''}`);
  for (const e of s.matchExpressions ?? []) {
    const values = [...(e.values ?? [])].sort().join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${values})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${values})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
  }
  return parts.join(',');
}

/** The Scale view of a Deployment (`scaleFromDeployment`). */
function toScale(obj: KubeObject): KubeObject {
  const spec = (obj['spec'] ?? {}) as { replicas?: number; selector?: unknown };
  const status = (obj['status'] ?? {}) as { replicas?: number };
  const m = obj.metadata;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: { name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion, creationTimestamp: m.creationTimestamp },
    spec: { replicas: spec.replicas ?? 0 },
    status: { replicas: status.replicas ?? 0, selector: formatSelector(spec.selector) },
  };
}

/** GET of `deployments/<name>/scale`. */
export function getScale(ctx: ServerContext, r: ResourceRequest): void {
  sendJson(r.res, 200, toScale(ctx.store.get(r.type, r.namespace, r.info.pathName ?? '')));
}

/** What a write of the Scale sent: a whole Scale (PUT) or a patch of one. */
export type ScaleWrite = { readonly scale: unknown } | { readonly patch: unknown; readonly contentType: string };

/** PUT or PATCH of `deployments/<name>/scale`: writes `spec.replicas` of the Deployment (its manager recorded with subresource `scale`). */
export function writeScale(ctx: ServerContext, r: ResourceRequest, input: ScaleWrite, opts: WriteOptions): void {
  const name = r.info.pathName ?? '';
  const current = ctx.store.get(r.type, r.namespace, name);
  let scale: unknown;
  if ('scale' in input) scale = input.scale;
  else {
    try {
      if (input.contentType === 'application/merge-patch+json') scale = mergePatch(toScale(current), input.patch);
      else if (input.contentType === 'application/json-patch+json') scale = jsonPatch(toScale(current), input.patch);
      else if (input.contentType === 'application/strategic-merge-patch+json') scale = strategicMergePatch(toScale(current), input.patch);
      else fail({ ...serverErrors.unsupportedMediaType(input.contentType), message: 'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json' });
    } catch (err) {
      if (err instanceof PatchApplyError) fail(serverErrors.patchRejected());
      throw err;
    }
  }
  const s = (scale ?? {}) as { metadata?: { resourceVersion?: string }; spec?: { replicas?: unknown } };
  const replicas = s.spec?.replicas ?? 0;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    fail(statusErrors.invalid({ group: 'autoscaling', kind: 'Scale' }, name, [{ reason: 'FieldValueInvalid', field: 'spec.replicas', message: `Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0` }]));
  }
  const next = cloneJson(current);
  next['spec'] = { ...((next['spec'] ?? {}) as object), replicas };
  // A resourceVersion in the Scale is a precondition on the Deployment.
  next.metadata.resourceVersion = s.metadata?.resourceVersion || current.metadata.resourceVersion || '';
  const result = ctx.store.update(r.type, r.namespace, name, next, { ...opts, subresource: 'scale' });
  sendJson(r.res, 200, toScale(result.object));
}

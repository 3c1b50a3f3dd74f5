/**
 * The multi-version rules of the CRD strategy (apiextensions-apiserver
 * `registry/customresourcedefinition/strategy.go` and `apis/apiextensions/validation`):
 * `status.storedVersions` gains every version that becomes the storage version, a spec update may not
 * drop a version still listed there, and `spec.conversion` is `None` or a well-formed `Webhook`.
 */
import type { KubeObject, StatusCause } from '../../src/kube/object.ts';

interface VersionsSpec {
  versions?: { name?: string; storage?: boolean }[];
  conversion?: {
    strategy?: string;
    webhook?: { clientConfig?: { url?: string; service?: { name?: string; namespace?: string; path?: string; port?: number }; caBundle?: string }; conversionReviewVersions?: string[] };
  };
}

function specOf(crd: KubeObject): VersionsSpec {
  return (crd['spec'] as VersionsSpec | undefined) ?? {};
}

function storedVersionsOf(crd: KubeObject): string[] {
  return ((crd['status'] as { storedVersions?: string[] } | undefined)?.storedVersions) ?? [];
}

/** PrepareForUpdate of the main resource: the (new) storage version joins `status.storedVersions`. */
export function recordStorageVersion(crd: KubeObject): void {
  const storage = specOf(crd).versions?.find((v) => v.storage)?.name;
  if (!storage) return;
  const status = ((crd['status'] as Record<string, unknown> | undefined) ?? {});
  const stored = storedVersionsOf(crd);
  if (!stored.includes(storage)) crd['status'] = { ...status, storedVersions: [...stored, storage] };
}

/** `ValidateCustomResourceDefinitionStoredVersions`: run on create and spec updates, not on `/status`. */
export function validateStoredVersions(crd: KubeObject): StatusCause[] {
  const stored = storedVersionsOf(crd);
  const path = 'status.storedVersions';
  if (stored.length === 0) return [{ reason: 'FieldValueInvalid', field: path, message: 'Invalid value: []string{}: must have at least one stored version' }];
  const causes: StatusCause[] = [];
  const versions = specOf(crd).versions ?? [];
  for (const v of versions) {
    if (v.storage && !stored.includes(v.name ?? '')) causes.push({ reason: 'FieldValueInvalid', field: path, message: `Invalid value: ${JSON.stringify(v)}: must have the storage version ${v.name ?? ''}` });
  }
  stored.forEach((name, i) => {
    if (!versions.some((v) => v.name === name)) causes.push({ reason: 'FieldValueInvalid', field: `${path}[${i}]`, message: `Invalid value: "${name}": must appear in spec.versions` });
  });
  return causes;
}

const REVIEW_VERSIONS = ['v1', 'v1beta1'];

/** `validateCustomResourceConversion` (field paths as kube reports them, from its internal type). */
export function validateConversion(crd: KubeObject): StatusCause[] {
  const conversion = specOf(crd).conversion;
  if (!conversion) return [];
  const path = 'spec.conversion';
  const strategy = conversion.strategy ?? '';
  if (strategy !== 'None' && strategy !== 'Webhook') {
    return [strategy === '' ? { reason: 'FieldValueRequired', field: `${path}.strategy`, message: 'Required value' } : { reason: 'FieldValueNotSupported', field: `${path}.strategy`, message: `Unsupported value: "${strategy}": supported values: "None", "Webhook"` }];
  }
  const webhook = conversion.webhook;
  if (strategy === 'None') {
    return webhook?.clientConfig ? [{ reason: 'FieldValueForbidden', field: `${path}.webhookClientConfig`, message: 'Forbidden: should not be set when strategy is not set to Webhook' }] : [];
  }
  const causes: StatusCause[] = [];
  const cc = webhook?.clientConfig;
  if (!cc) causes.push({ reason: 'FieldValueRequired', field: `${path}.webhookClientConfig`, message: 'Required value: required when strategy is set to Webhook' });
  else if ((cc.url === undefined) === (cc.service === undefined)) causes.push({ reason: 'FieldValueRequired', field: `${path}.webhookClientConfig`, message: 'Required value: exactly one of url or service is required' });
  else if (cc.url !== undefined && !cc.url.startsWith('https://')) causes.push({ reason: 'FieldValueInvalid', field: `${path}.webhookClientConfig.url`, message: `Invalid value: "${cc.url.split(':')[0] ?? ''}": 'https' is the only allowed URL scheme` });
  else if (cc.service !== undefined) {
    if (!cc.service.name) causes.push({ reason: 'FieldValueRequired', field: `${path}.webhookClientConfig.service.name`, message: 'Required value: service name is required' });
    if (!cc.service.namespace) causes.push({ reason: 'FieldValueRequired', field: `${path}.webhookClientConfig.service.namespace`, message: 'Required value: service namespace is required' });
  }
  const reviews = webhook?.conversionReviewVersions ?? [];
  if (reviews.length === 0) causes.push({ reason: 'FieldValueRequired', field: `${path}.conversionReviewVersions`, message: 'Required value' });
  else if (!reviews.some((v) => REVIEW_VERSIONS.includes(v))) {
    causes.push({ reason: 'FieldValueInvalid', field: `${path}.conversionReviewVersions`, message: `Invalid value: ${JSON.stringify(reviews)}: must include at least one of v1, v1beta1` });
  }
  return causes;
}

/**
 * The `apiextensions.k8s.io` ConversionReview exchange, as apiextensions-apiserver's
 * `webhook_converter.go` builds the request and judges the answer. Pure: no I/O here.
 */
import type { KubeObject } from '../../../src/kube/object.ts';
import { cloneJson } from '../json-equal.ts';

/** ConversionReview versions this server speaks, in kube's order of preference within the CRD's list. */
export const SUPPORTED_REVIEW_VERSIONS = ['v1', 'v1beta1'] as const;

/** A request body and what its answer must echo. */
export interface ReviewRequest {
  readonly body: Record<string, unknown>;
  readonly uid: string;
  readonly reviewVersion: 'v1' | 'v1beta1';
}

/**
 * The review for `objects`, in the first version of the CRD's `conversionReviewVersions` this server
 * understands (kube `createConversionReviewObjects`); an Error when none is.
 */
export function buildReview(conversionReviewVersions: readonly string[], objects: readonly KubeObject[], desiredAPIVersion: string, uid: string): ReviewRequest | Error {
  const reviewVersion = conversionReviewVersions.find((v): v is 'v1' | 'v1beta1' => (SUPPORTED_REVIEW_VERSIONS as readonly string[]).includes(v));
  if (!reviewVersion) return new Error('no supported conversion review versions');
  return {
    uid,
    reviewVersion,
    body: { kind: 'ConversionReview', apiVersion: `apiextensions.k8s.io/${reviewVersion}`, request: { uid, desiredAPIVersion, objects } },
  };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The converted objects of a decoded answer, or the failure text kube puts after
 * `conversion webhook for <gvk> failed: ` (`getConvertedObjectsFromResponse`).
 */
export function convertedObjectsOf(review: ReviewRequest, answer: unknown): unknown[] | Error {
  if (!isRecord(answer)) return new Error('the webhook answer is not a JSON object');
  if (review.reviewVersion === 'v1') {
    const gvk = `${String(answer['apiVersion'] ?? '')}, Kind=${String(answer['kind'] ?? '')}`;
    if (answer['apiVersion'] !== 'apiextensions.k8s.io/v1' || answer['kind'] !== 'ConversionReview') {
      return new Error(`expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got ${gvk}`);
    }
  }
  const response = answer['response'];
  if (!isRecord(response)) return new Error('no response provided');
  // v1beta1 never checked the uid (kept so for compatibility, as kube does).
  if (review.reviewVersion === 'v1' && response['uid'] !== review.uid) {
    return new Error(`expected response.uid=${JSON.stringify(review.uid)}, got ${JSON.stringify(String(response['uid'] ?? ''))}`);
  }
  const result = isRecord(response['result']) ? response['result'] : {};
  if (result['status'] !== 'Success') {
    const message = typeof result['message'] === 'string' ? result['message'] : '';
    return new Error(message || `response.result.status was '${String(result['status'] ?? '')}', not 'Success'`);
  }
  const converted = response['convertedObjects'];
  return Array.isArray(converted) ? converted : [];
}

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const QUALIFIED_NAME = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** The label/annotation checks kube runs on a changed map (`ValidateLabels`, `ValidateAnnotations`), reduced to keys, values and total size. */
function metaMapError(field: 'labels' | 'annotations', map: Record<string, string>): string | undefined {
  for (const [k, v] of Object.entries(map)) {
    const name = k.includes('/') ? k.slice(k.indexOf('/') + 1) : k;
    if (!QUALIFIED_NAME.test(k) || name.length > 63 || k.length - name.length - 1 > 253) return `metadata.${field === 'labels' ? 'labels' : 'annotation'}: Invalid value: ${JSON.stringify(k)}: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`;
    if (field === 'labels' && (v.length > 63 || !LABEL_VALUE.test(v))) return `metadata.labels: Invalid value: ${JSON.stringify(v)}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`;
  }
  if (field === 'annotations') {
    const size = Object.entries(map).reduce((n, [k, v]) => n + k.length + v.length, 0);
    if (size > 256 * 1024) return `metadata.annotation: Too long: must have at most 262144 bytes`;
  }
  return undefined;
}

/**
 * Checks one converted object against its original and returns it with the original's metadata,
 * keeping only the webhook's labels and annotations (kube `validateConvertedObject` +
 * `restoreObjectMeta`). The Error's text follows kube's `returned invalid …` messages.
 */
export function acceptConverted(original: KubeObject, raw: unknown, desiredAPIVersion: string, index: number, single: boolean): KubeObject | Error {
  const where = single ? 'returned invalid object' : `returned invalid converted object at index ${index}`;
  if (!isRecord(raw)) return new Error(`${where}: not an object`);
  const converted = raw as KubeObject;
  if (converted.apiVersion !== desiredAPIVersion) return new Error(`${single ? `${where} at index 0` : where}: invalid groupVersion (expected ${desiredAPIVersion}, received ${String(converted.apiVersion ?? '')})`);
  if (converted.kind !== original.kind) return new Error(`${single ? `${where} at index 0` : where}: invalid kind (expected ${original.kind ?? ''}, received ${String(converted.kind ?? '')})`);
  const meta = isRecord(converted.metadata) ? (converted.metadata as Record<string, unknown>) : undefined;
  const om = original.metadata;
  for (const [field, label] of [['name', 'name'], ['namespace', 'namespace'], ['uid', 'UID']] as const) {
    const a = String(om[field] ?? '');
    const b = String(meta?.[field] ?? '');
    if (a !== b) return new Error(`${single ? 'returned invalid object' : where}: must have the same ${label}: ${a} != ${b}`);
  }
  const metaWhere = single ? 'returned invalid metadata' : `returned invalid metadata in object at index ${index}`;
  if (!meta) return new Error(`${metaWhere}: missing metadata in converted object`);
  const restored = cloneJson(om) as Record<string, unknown>;
  for (const field of ['labels', 'annotations'] as const) {
    const given = meta[field];
    if (given === undefined || given === null) {
      delete restored[field];
      continue;
    }
    if (!isRecord(given)) return new Error(`${metaWhere}: invalid metadata.${field} of type ${Array.isArray(given) ? '[]interface {}' : typeof given} in converted object`);
    for (const [k, v] of Object.entries(given)) if (typeof v !== 'string') return new Error(`${metaWhere}: metadata.${field}[${k}] must be a string, but is ${typeof v} in converted object`);
    const error = metaMapError(field, given as Record<string, string>);
    if (error) return new Error(`${metaWhere}: ${error}`);
    restored[field] = given;
  }
  return { ...converted, metadata: restored as KubeObject['metadata'] };
}

/**
 * The conversion webhook's contract (apiextensions-apiserver pkg/apiserver/conversion/webhook_converter.go;
 * Kubernetes docs "Versions in CustomResourceDefinitions", Webhook request and response) as one pure
 * function: a `ConversionReview` in, the `ConversionReview` to answer with out. The API server checks
 * the answer: the same review apiVersion and kind, `response.uid` equal to the request's, `result.status`
 * `Success`, exactly as many `convertedObjects` as it sent objects and in the same order, each in the
 * desired apiVersion, of the same kind, name, namespace and uid (only labels and annotations may change).
 * Anything this webhook cannot convert fails the whole review with `result: {status: Failure, message}`,
 * which the API server reports as "conversion webhook for <gvk> failed: <message>"; there is no partial
 * answer. The HTTP server around it (TLS, per replica) is not here.
 */
import { ConversionError, convertBackupSchedule, CONVERTIBLE_VERSIONS } from './backupschedule-conversion.ts';

/** The webhook's path: the CRD's `conversion.webhook.clientConfig.service.path` (src/manifests/crd.ts), served by src/controller. */
export const CONVERSION_WEBHOOK_PATH = '/convert';

/** The review versions this webhook answers (the CRD's `conversionReviewVersions`); the answer uses the request's. */
export const CONVERSION_REVIEW_VERSIONS: readonly string[] = ['v1', 'v1beta1'];

/** `apiextensions.k8s.io/v1` ConversionRequest. */
export interface ConversionRequest {
  readonly uid: string;
  readonly desiredAPIVersion: string;
  readonly objects: readonly Record<string, unknown>[];
}

/** metav1.Status as the review's `result` carries it. */
export interface ConversionResult {
  readonly status: 'Success' | 'Failure';
  readonly message?: string;
}

/** `apiextensions.k8s.io/v1` ConversionResponse. */
export interface ConversionResponse {
  readonly uid: string;
  readonly convertedObjects: readonly Record<string, unknown>[];
  readonly result: ConversionResult;
}

/** A ConversionReview as sent (with `request`) or answered (with `response`). */
export interface ConversionReview {
  readonly apiVersion: string;
  readonly kind: 'ConversionReview';
  readonly request?: ConversionRequest;
  readonly response?: ConversionResponse;
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The answer for a request that failed: no objects, the reason in `result.message`. */
function failure(apiVersion: string, uid: string, message: string): ConversionReview {
  return { apiVersion, kind: 'ConversionReview', response: { uid, convertedObjects: [], result: { status: 'Failure', message } } };
}

/**
 * Answers a ConversionReview (parsed JSON of the request body). A malformed review, an unknown
 * `desiredAPIVersion`, or an object of another kind or version is a Failure result naming the problem
 * (and the object's index, name and namespace), with the request's uid echoed; only a bug in conversion
 * itself (anything but a ConversionError) is thrown, for the server to answer 500.
 */
export function handleConversionReview(review: unknown): ConversionReview {
  const reviewApiVersion = isObject(review) && typeof review['apiVersion'] === 'string' ? review['apiVersion'] : 'apiextensions.k8s.io/v1';
  const request = isObject(review) ? review['request'] : undefined;
  const uid = isObject(request) && typeof request['uid'] === 'string' ? request['uid'] : '';
  const supported = CONVERSION_REVIEW_VERSIONS.map((v) => `apiextensions.k8s.io/${v}`);
  if (!isObject(review) || review['kind'] !== 'ConversionReview' || !supported.includes(reviewApiVersion)) {
    return failure(supported[0]!, uid, `expected a ConversionReview of ${supported.join(' or ')}, got ${String(isObject(review) ? `${String(review['apiVersion'])} ${String(review['kind'])}` : typeof review)}`);
  }
  if (!isObject(request) || uid === '') return failure(reviewApiVersion, uid, 'ConversionReview has no request with a uid');
  const desired = request['desiredAPIVersion'];
  const objects = request['objects'];
  if (typeof desired !== 'string' || desired === '') return failure(reviewApiVersion, uid, 'request.desiredAPIVersion is required');
  if (!CONVERTIBLE_VERSIONS.includes(desired)) {
    return failure(reviewApiVersion, uid, `unsupported desiredAPIVersion ${JSON.stringify(desired)}; expected one of ${CONVERTIBLE_VERSIONS.join(', ')}`);
  }
  if (!Array.isArray(objects)) return failure(reviewApiVersion, uid, 'request.objects must be a list');
  const convertedObjects: Record<string, unknown>[] = [];
  for (const [index, object] of objects.entries()) {
    if (!isObject(object)) return failure(reviewApiVersion, uid, `request.objects[${index}]: expected an object`);
    try {
      convertedObjects.push(convertBackupSchedule(object, desired));
    } catch (error) {
      if (!(error instanceof ConversionError)) throw error;
      const metadata = isObject(object['metadata']) ? object['metadata'] : {};
      const name = `${typeof metadata['namespace'] === 'string' ? `${metadata['namespace']}/` : ''}${String(metadata['name'] ?? '')}`;
      return failure(reviewApiVersion, uid, `request.objects[${index}] (${name}): ${error.message}`);
    }
  }
  return { apiVersion: reviewApiVersion, kind: 'ConversionReview', response: { uid, convertedObjects, result: { status: 'Success' } } };
}

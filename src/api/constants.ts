/** API group of the BackupSchedule resource. */
export const API_GROUP = 'kubelings.dev';
/** The first version, still served (converted by the webhook); no longer the stored one. */
export const API_VERSION = 'v1alpha1';
/** `apiVersion` field value of a BackupSchedule. */
export const GROUP_VERSION = `${API_GROUP}/${API_VERSION}`;
/** Kind of the resource. */
export const KIND = 'BackupSchedule';
/** Plural resource name (the REST path segment). */
export const PLURAL = 'backupschedules';
/** Singular resource name. */
export const SINGULAR = 'backupschedule';
/** `kubectl get bks`. */
export const SHORT_NAMES: readonly string[] = ['bks'];
/** `kubectl get backup` lists BackupSchedules (and anything else in the category). */
export const CATEGORIES: readonly string[] = ['backup'];
/** Name of the CustomResourceDefinition (`<plural>.<group>`). */
export const CRD_NAME = `${PLURAL}.${API_GROUP}`;
/** The storage version, served beside v1alpha1: GFS retention, a discriminated source. */
export const API_VERSION_V1 = 'v1';
/** `apiVersion` field value of a v1 BackupSchedule. */
export const GROUP_VERSION_V1 = `${API_GROUP}/${API_VERSION_V1}`;
/** The `apiVersion`s the CRD serves, oldest first: what validate, preview and the construct accept. */
export const SERVED_GROUP_VERSIONS = [GROUP_VERSION, GROUP_VERSION_V1] as const;
/** A served `apiVersion` of BackupSchedule. */
export type ServedGroupVersion = (typeof SERVED_GROUP_VERSIONS)[number];
/**
 * The annotation that carries a v1 retention v1alpha1 cannot express through v1alpha1 (its JSON);
 * conversion (src/conversion) owns it.
 */
export const RETENTION_ANNOTATION = `${API_GROUP}/v1-retention`;
/**
 * Set by conversion to v1 when {@link RETENTION_ANNOTATION} was not a valid v1 retention: what it
 * held (cut to 1 KiB) and why it was dropped, as JSON `{"rejected": "<text>", "reason": "<problems>"}`.
 */
export const RETENTION_REJECTED_ANNOTATION = `${API_GROUP}/v1-retention-rejected`;
/**
 * The annotation that carries a v1 `spec.destination` v1alpha1 cannot express (an object store, as
 * JSON) through v1alpha1; conversion (src/conversion) owns it, as {@link RETENTION_ANNOTATION}.
 */
export const DESTINATION_ANNOTATION = `${API_GROUP}/v1-destination`;
/** The annotation that carries v1's `spec.encryption` (JSON) through v1alpha1, which has no such field. */
export const ENCRYPTION_ANNOTATION = `${API_GROUP}/v1-encryption`;
/** Where conversion reports a carried annotation it rejected: the annotation's key plus `-rejected`. */
export const rejectedAnnotationOf = (annotation: string): string => `${annotation}-rejected`;

/** The BackupSchedule API: schema, generated types, constants, defaults and validation. */
export type * from '../../imports/backupschedule.ts';
/** The `kubelings.dev/v1` types (generated from src/api/schema-v1.ts), as a namespace: `v1.BackupSchedule`. */
export type * as v1 from '../../imports/backupschedule-v1.ts';
/** A BackupSchedule in either served version (`kubelings.dev/v1alpha1` or `kubelings.dev/v1`), told apart by `apiVersion`. */
export type AnyBackupSchedule = import('../../imports/backupschedule.ts').BackupSchedule | import('../../imports/backupschedule-v1.ts').BackupSchedule;
export {
  API_GROUP,
  API_VERSION,
  API_VERSION_V1,
  CATEGORIES,
  CRD_NAME,
  GROUP_VERSION,
  GROUP_VERSION_V1,
  KIND,
  PLURAL,
  DESTINATION_ANNOTATION,
  ENCRYPTION_ANNOTATION,
  rejectedAnnotationOf,
  RETENTION_ANNOTATION,
  RETENTION_REJECTED_ANNOTATION,
  SERVED_GROUP_VERSIONS,
  type ServedGroupVersion,
  SHORT_NAMES,
  SINGULAR,
} from './constants.ts';
export { backupScheduleSchema, type SchemaNode } from './schema.ts';
export { backupScheduleV1Schema, DEFAULT_DESTINATION_TYPE, DESTINATION_TYPES, RETENTION_RULES, SOURCE_TYPES } from './schema-v1.ts';
export { toCrdOpenApiSchema } from './crd-schema.ts';
export { SPEC_DEFAULTS } from './defaults.ts';
export { CEL_RULES, CEL_RULES_V1, type CelRule } from './cel-rules.ts';
export { CARRIED_FIELDS, type CarriedField, carriedFieldProblems, isV1, retentionAnnotationProblems, validateAnyVersion, validateBackupSchedule, validateBackupScheduleV1, type FieldError } from './validate.ts';

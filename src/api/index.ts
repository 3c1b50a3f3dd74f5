/** The BackupSchedule API: schema, generated types, constants, defaults and validation. */
export type * from '../../imports/backupschedule.ts';
export {
  API_GROUP,
  API_VERSION,
  CATEGORIES,
  CRD_NAME,
  GROUP_VERSION,
  KIND,
  PLURAL,
  SHORT_NAMES,
  SINGULAR,
} from './constants.ts';
export { backupScheduleSchema, type SchemaNode } from './schema.ts';
export { toCrdOpenApiSchema } from './crd-schema.ts';
export { SPEC_DEFAULTS } from './defaults.ts';
export { CEL_RULES, type CelRule } from './cel-rules.ts';
export { validateBackupSchedule, type FieldError } from './validate.ts';

/** Conversion between the BackupSchedule API versions, and the conversion webhook's ConversionReview contract. Pure. */
export {
  convertBackupSchedule,
  ConversionError,
  CONVERTIBLE_VERSIONS,
  DESTINATION_ANNOTATION,
  ENCRYPTION_ANNOTATION,
  KEEP_LAST_MAX,
  REJECTED_TEXT_MAX,
  RETENTION_ANNOTATION,
  RETENTION_REJECTED_ANNOTATION,
  toV1,
  toV1alpha1,
} from './backupschedule-conversion.ts';
export {
  CONVERSION_REVIEW_VERSIONS,
  CONVERSION_WEBHOOK_PATH,
  handleConversionReview,
  type ConversionRequest,
  type ConversionResponse,
  type ConversionResult,
  type ConversionReview,
} from './conversion-review.ts';

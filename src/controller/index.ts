/** The BackupSchedule controller: reconciler, event mapping, Events, the conversion webhook, flags and the process assembly. */
export {
  BackupScheduleReconciler,
  type BackupScheduleReconcilerOptions,
  type CacheReader,
  type ReconcileLogger,
  type ReconcileMove,
  type ReconcilerWrites,
} from './backupschedule/reconciler.ts';
export { parseCommandLine, UsageError, USAGE, type Command, type ControllerOptions } from './cli-options.ts';
export { ownerScheduleKey, scheduleKey, stripCronJob, stripCustomResource } from './backupschedule/event-mapping.ts';
export { KubeEventRecorder, type EventRecorder, type EventType, type EventWriter, type KubeEventRecorderOptions } from './event-recorder.ts';
export { startOperator, type OperatorEnvironment, type RunningOperator } from './operator.ts';
export { addBackupScheduleController, CONTROLLER_NAME, type BackupScheduleController, type BackupScheduleControllerSetup } from './backupschedule/controller.ts';
export { BACKUP_SCHEDULES, CRON_JOBS, EVENTS, type BackupScheduleObject } from './resources.ts';
export { caBundleInjector, type CaBundleInjectorOptions, type CrdClient } from './ca-bundle-injector.ts';
export { CONVERSION_WEBHOOK_PATH, conversionWebhookHandler, DEFAULT_MAX_REVIEW_BYTES, type ConversionWebhookOptions } from './conversion-webhook.ts';
export {
  startConversionWebhook,
  webhookDnsNames,
  type ConversionWebhookServerOptions,
  type DirectoryCertificateOptions,
  type RunningConversionWebhook,
  type SecretCertificateOptions,
  type WebhookCertificateSource,
} from './conversion-webhook-server.ts';

/** The BackupSchedule controller: reconciler, event mapping, Events, flags and the process assembly. */
export {
  BackupScheduleReconciler,
  type BackupScheduleReconcilerOptions,
  type CacheReader,
  type ReconcileLogger,
  type ReconcileMove,
  type ReconcilerWrites,
} from './backupschedule-reconciler.ts';
export { parseCommandLine, UsageError, USAGE, type Command, type ControllerOptions } from './cli-options.ts';
export { ownerScheduleKey, scheduleKey, stripCronJob, stripSchedule } from './event-mapping.ts';
export { KubeEventRecorder, type EventRecorder, type EventType, type EventWriter, type KubeEventRecorderOptions } from './event-recorder.ts';
export { CONTROLLER_NAME, startOperator, type OperatorEnvironment, type RunningOperator } from './operator.ts';
export { BACKUP_SCHEDULES, CRON_JOBS, EVENTS, type BackupScheduleObject } from './resources.ts';

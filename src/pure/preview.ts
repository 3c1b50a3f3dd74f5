import type { Restore } from '../../imports/restore.ts';
import type { AnyBackupSchedule } from '../api/index.ts';
import { buildCronJob, type BuildOptions, type CronJob } from './cron-job.ts';
import { buildRestoreJob, type Job, type ResolvedSource } from './restore-job.ts';

/**
 * What previewCronJob puts in the ownerReference's `uid`: the real one exists only once the API server
 * has created the BackupSchedule. A fixed value keeps previews (and users' snapshot tests) deterministic.
 */
export const PREVIEW_UID = '00000000-0000-0000-0000-000000000000';

/** Options of previewCronJob. */
export interface PreviewOptions extends BuildOptions {
  /**
   * Namespace assumed when the BackupSchedule has none (kubectl applies it to the context's namespace;
   * the child CronJob lives in the same one).
   * @default 'default'
   */
  readonly namespace?: string;
}

/**
 * The CronJob the controller creates for `schedule`, through the controller's own buildCronJob, before
 * the BackupSchedule exists in a cluster: a missing `metadata.namespace` becomes `options.namespace` and
 * the owner's uid is {@link PREVIEW_UID}. Everything else is byte for byte what the controller sends.
 *
 * @throws Error naming every invalid field (validateBackupSchedule), as buildCronJob does.
 */
export function previewCronJob(schedule: AnyBackupSchedule, options: PreviewOptions = {}): CronJob {
  const metadata = schedule.metadata ?? {};
  const { namespace = 'default', ...build } = options;
  return buildCronJob(
    { ...schedule, metadata: { ...metadata, namespace: metadata.namespace ?? namespace, uid: metadata.uid ?? PREVIEW_UID } },
    build,
  );
}

/**
 * The Job the controller creates for `restore`, through buildRestoreJob, before the Restore exists:
 * the namespace and uid filled in as {@link previewCronJob} does. `resolved` is the destination of the
 * BackupSchedule spec.from.backupScheduleName names (none when spec.from names its own source).
 *
 * @throws Error naming every invalid field (validateRestore), as buildRestoreJob does.
 */
export function previewRestoreJob(restore: Restore, resolved: ResolvedSource | undefined, options: PreviewOptions = {}): Job {
  const metadata = restore.metadata ?? {};
  const { namespace = 'default', image } = options;
  return buildRestoreJob({ ...restore, metadata: { ...metadata, namespace: metadata.namespace ?? namespace, uid: metadata.uid ?? PREVIEW_UID } }, resolved, image === undefined ? {} : { image });
}

import type { AnyBackupSchedule } from '../api/index.ts';
import { buildCronJob, type BuildOptions, type CronJob } from './cron-job.ts';

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

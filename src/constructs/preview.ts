/**
 * The preview functions as the package publishes them: the controller's own (src/pure), typed with the
 * package's CronJob (cron-job-types.ts) so the public `.d.ts` needs no optional dependency. Each
 * assignment below is the compile-time proof that the operator's value fits the published type.
 */
import type { AnyBackupSchedule } from '../api/index.ts';
import { PREVIEW_UID as PURE_PREVIEW_UID, previewCronJob as purePreviewCronJob } from '../pure/preview.ts';
import { serverDefaultsOf as pureServerDefaultsOf, withServerDefaults as pureWithServerDefaults } from '../pure/server-defaults.ts';
import type { CronJob } from './cron-job-types.ts';

/**
 * What previewCronJob puts in the ownerReference's `uid`: the real one exists only once the API server
 * has created the BackupSchedule. A fixed value keeps previews (and users' snapshot tests) deterministic.
 */
export const PREVIEW_UID: '00000000-0000-0000-0000-000000000000' = PURE_PREVIEW_UID;

/** Options of previewCronJob and `BackupSchedule.toCronJob()`. */
export interface PreviewOptions {
  /**
   * Image of the backup container when the spec sets none (the controller uses its `--backup-image`).
   * @default the operator release's backup image
   */
  readonly image?: string;
  /**
   * Whether the Job template carries the podFailurePolicy that makes exit codes 3 and 4 final (retrying
   * cannot help). The controller turns it off on clusters older than 1.26, whose API server drops it.
   * @default true
   */
  readonly podFailurePolicy?: boolean;
  /**
   * Namespace assumed when the BackupSchedule has none (kubectl applies it to the context's namespace;
   * the child CronJob lives in the same one).
   * @default 'default'
   */
  readonly namespace?: string;
}

/** One field the API server adds: its path in the object and the value it sets. */
export interface ServerDefault {
  /** Path of the field, list indices as numbers' strings, e.g. `['spec', 'jobTemplate', …, 'containers', '0', 'imagePullPolicy']`. */
  readonly path: readonly string[];
  /** The value the API server writes there. */
  readonly value: unknown;
}

/**
 * The CronJob the controller creates for `schedule`, through the controller's own buildCronJob, before
 * the BackupSchedule exists in a cluster: a missing `metadata.namespace` becomes `options.namespace` and
 * the owner's uid is {@link PREVIEW_UID}. Everything else is byte for byte what the controller sends.
 *
 * @throws Error naming every invalid field, as the controller's validation does.
 */
export function previewCronJob(schedule: AnyBackupSchedule, options: PreviewOptions = {}): CronJob {
  return purePreviewCronJob(schedule, options);
}

/**
 * The fields the API server would add to `cronJob` (absent there, with their default value), in a
 * stable order; `imagePullPolicy` follows the image tag (`Always` for `:latest` or no tag, else `IfNotPresent`).
 */
export function serverDefaultsOf(cronJob: CronJob): ServerDefault[] {
  // The controller's type is narrower (enums, not strings) but the function reads the object as JSON.
  return pureServerDefaultsOf(cronJob as Parameters<typeof pureServerDefaultsOf>[0]);
}

/** A deep copy of `cronJob` with the server defaults of {@link serverDefaultsOf} filled in: the CronJob as the API server stores it. */
export function withServerDefaults(cronJob: CronJob): CronJob {
  return pureWithServerDefaults(cronJob as Parameters<typeof pureWithServerDefaults>[0]);
}

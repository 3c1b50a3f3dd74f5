import { ApiObject, type ApiObjectMetadata } from 'cdk8s';
import type { Construct } from 'constructs';
import type { Restore as RestoreManifest, RestoreSource, RestoreSpec } from '../../imports/restore.ts';
import { GROUP_VERSION_V1 } from '../api/constants.ts';
import { RESTORE_KIND } from '../api/restore-schema.ts';
import { validateRestore } from '../api/validate.ts';
import { previewRestoreJob as purePreviewRestoreJob } from '../pure/preview.ts';
import type { CronJobObjectMeta, JobSpec } from './cron-job-types.ts';

/** A batch/v1 Job as the controller creates it for a Restore (the package's own type: no optional dependency). */
export interface Job {
  apiVersion: 'batch/v1';
  kind: 'Job';
  metadata?: CronJobObjectMeta;
  spec?: JobSpec;
}

/** Where a Restore from a BackupSchedule reads the backups: that schedule's `spec.destination`. */
export type RestoreResolvedSource = Pick<RestoreSource, 'persistentVolumeClaim' | 'objectStore'>;

/** Options of `Restore.toJob()` and previewRestoreJob. */
export interface RestorePreviewOptions {
  /**
   * Image of the restore container when the spec sets none (the controller uses its `--backup-image`).
   * @default the operator release's backup image
   */
  readonly image?: string;
  /**
   * Namespace assumed when the Restore has none.
   * @default 'default'
   */
  readonly namespace?: string;
}

/**
 * The Job the controller creates for `restore`, through its own buildRestoreJob, before the Restore
 * exists: a missing namespace becomes `options.namespace`, the owner's uid is PREVIEW_UID. `resolved`
 * is the destination of the BackupSchedule that `spec.from.backupScheduleName` names; leave it out
 * when spec.from names a claim or a bucket itself.
 *
 * @throws Error naming every invalid field, or a missing or needless `resolved`.
 */
export function previewRestoreJob(restore: RestoreManifest, resolved?: RestoreResolvedSource, options: RestorePreviewOptions = {}): Job {
  // The controller's Job type is the Kubernetes models' (narrower enums); this is the same JSON.
  return purePreviewRestoreJob(restore, resolved, options) as Job;
}

/** Props of the Restore construct. */
export interface RestoreProps {
  /**
   * Metadata of the Restore. Without a `name`, cdk8s derives one from the construct path; without a
   * `namespace`, the chart's namespace applies.
   * @default {}
   */
  readonly metadata?: ApiObjectMetadata;
  /** The spec, typed from the operator's Restore JSON Schema. Immutable once created. */
  readonly spec: RestoreSpec;
}

/**
 * A Restore (`kubelings.dev/v1`) for your own cdk8s app: one backup restored into a claim by one Job.
 * At synth time it is checked by the validator the controller runs, so a bad spec fails the synth
 * with the field and the problem (`spec.from: exactly one of … must be set`).
 */
export class Restore extends ApiObject {
  public constructor(scope: Construct, id: string, props: RestoreProps) {
    super(scope, id, { apiVersion: GROUP_VERSION_V1, kind: RESTORE_KIND, metadata: props.metadata, spec: props.spec });
    // At synth, not here: metadata and JSON patches added after construction are checked too.
    this.node.addValidation({ validate: () => validateRestore(this.toJson()).map((error) => error.message) });
  }

  /** The Restore manifest as synthesized (names and namespace resolved). */
  public toRestore(): RestoreManifest {
    return this.toJson() as RestoreManifest;
  }

  /**
   * The Job the controller will create for this Restore (see {@link previewRestoreJob}).
   * @throws Error naming every invalid field.
   */
  public toJob(resolved?: RestoreResolvedSource, options: RestorePreviewOptions = {}): Job {
    return previewRestoreJob(this.toRestore(), resolved, options);
  }
}

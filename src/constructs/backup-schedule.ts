import { ApiObject, type ApiObjectMetadata } from 'cdk8s';
import type { Construct } from 'constructs';
import { GROUP_VERSION, KIND } from '../api/constants.ts';
import type { BackupSchedule as BackupScheduleObject, BackupScheduleSpec } from '../api/index.ts';
import { validateBackupSchedule } from '../api/validate.ts';
import type { CronJob } from '../pure/cron-job.ts';
import { previewCronJob, type PreviewOptions } from '../pure/preview.ts';

/** Props of the BackupSchedule construct. */
export interface BackupScheduleProps {
  /**
   * Metadata of the BackupSchedule. Without a `name`, cdk8s derives one from the construct path (with
   * a hash unless the chart disables it); without a `namespace`, the chart's namespace applies.
   * @default {}
   */
  readonly metadata?: ApiObjectMetadata;
  /**
   * The spec, typed from the operator's JSON Schema; each field documents its `@default` (applied by
   * the API server, not written into the manifest).
   */
  readonly spec: BackupScheduleSpec;
}

/**
 * A `kubelings.dev/v1alpha1` BackupSchedule for your own cdk8s app. At synth time (`cdk8s synth`,
 * `app.synth()`, `Testing.synth`) it is checked by `validateBackupSchedule`, the validator the
 * controller runs, so a bad spec fails the synth with the field and the problem
 * (`spec.retention.keepLast: must be <= 1000`) instead of failing at sync time.
 */
export class BackupSchedule extends ApiObject {
  public constructor(scope: Construct, id: string, props: BackupScheduleProps) {
    super(scope, id, { apiVersion: GROUP_VERSION, kind: KIND, metadata: props.metadata, spec: props.spec });
    // At synth, not here: metadata and JSON patches added after construction are checked too.
    this.node.addValidation({ validate: () => validateBackupSchedule(this.toJson()).map((error) => error.message) });
  }

  /** The BackupSchedule manifest as synthesized (names and namespace resolved). */
  public toBackupSchedule(): BackupScheduleObject {
    return this.toJson() as BackupScheduleObject;
  }

  /**
   * The child CronJob the controller will create for this BackupSchedule, built by the controller's own
   * `buildCronJob` (see `previewCronJob` for the namespace and uid it assumes). Snapshot it in tests.
   * @throws Error naming every invalid field.
   */
  public toCronJob(options: PreviewOptions = {}): CronJob {
    return previewCronJob(this.toBackupSchedule(), options);
  }
}

import { ApiObject, type ApiObjectMetadata } from 'cdk8s';
import type { Construct } from 'constructs';
import { GROUP_VERSION, GROUP_VERSION_V1, KIND, type ServedGroupVersion } from '../api/constants.ts';
import type { BackupSchedule as BackupScheduleObject, BackupScheduleSpec, v1 } from '../api/index.ts';
import { validateAnyVersion } from '../api/validate.ts';
import type { CronJob } from './cron-job-types.ts';
import { previewCronJob, type PreviewOptions } from './preview.ts';

/** The manifest and spec types of each served version, by `apiVersion`. */
export interface BackupScheduleVersions {
  /** The first version: `retention.keepLast` only, the source member present says what it is. */
  readonly [GROUP_VERSION]: { readonly manifest: BackupScheduleObject; readonly spec: BackupScheduleSpec };
  /** The storage version: grandfather-father-son retention, `source.type` names the member. */
  readonly [GROUP_VERSION_V1]: { readonly manifest: v1.BackupSchedule; readonly spec: v1.BackupScheduleSpec };
}

/** Props of the BackupSchedule construct; `V` is the `apiVersion` it is written in. */
export interface BackupScheduleProps<V extends ServedGroupVersion = typeof GROUP_VERSION_V1> {
  /**
   * The API version the BackupSchedule is written in, and so the type of `spec`: `kubelings.dev/v1`
   * (grandfather-father-son retention, `source.type`), the one the CRD stores, unless you ask for
   * `kubelings.dev/v1alpha1` (`GROUP_VERSION`), which kube-apiserver serves through the operator's
   * conversion webhook; the API server converts between the two either way.
   * @default 'kubelings.dev/v1' (0.2.0 defaulted to v1alpha1: pass `apiVersion: 'kubelings.dev/v1alpha1'` to keep writing it)
   */
  readonly apiVersion?: V;
  /**
   * Metadata of the BackupSchedule. Without a `name`, cdk8s derives one from the construct path (with
   * a hash unless the chart disables it); without a `namespace`, the chart's namespace applies.
   * @default {}
   */
  readonly metadata?: ApiObjectMetadata;
  /**
   * The spec of `apiVersion`, typed from the operator's JSON Schema of that version; each field
   * documents its `@default` (applied by the API server, not written into the manifest).
   */
  readonly spec: BackupScheduleVersions[V]['spec'];
}

/**
 * A BackupSchedule for your own cdk8s app, in `kubelings.dev/v1` (the default) or, with
 * `apiVersion: 'kubelings.dev/v1alpha1'`, in v1alpha1. At synth time (`cdk8s synth`, `app.synth()`,
 * `Testing.synth`) it is checked in its own version by the validator the controller runs, so a bad
 * spec fails the synth with the field and the problem (`spec.retention.keepLast: must be <= 1000`)
 * instead of failing at sync time.
 */
export class BackupSchedule<V extends ServedGroupVersion = typeof GROUP_VERSION_V1> extends ApiObject {
  public constructor(scope: Construct, id: string, props: BackupScheduleProps<V>) {
    super(scope, id, { apiVersion: props.apiVersion ?? GROUP_VERSION_V1, kind: KIND, metadata: props.metadata, spec: props.spec });
    // At synth, not here: metadata and JSON patches added after construction are checked too.
    this.node.addValidation({ validate: () => validateAnyVersion(this.toJson()).map((error) => error.message) });
  }

  /** The BackupSchedule manifest as synthesized (names and namespace resolved). */
  public toBackupSchedule(): BackupScheduleVersions[V]['manifest'] {
    return this.toJson() as BackupScheduleVersions[V]['manifest'];
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

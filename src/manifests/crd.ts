import { Construct } from 'constructs';
import type { ApiObject } from 'cdk8s';
import type { ICustomResourceColumnDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1/CustomResourceColumnDefinition';
import type { ICustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1/CustomResourceDefinition';
import type { IJSONSchemaProps } from 'kubernetes-models/apiextensions.k8s.io/v1/JSONSchemaProps';
import { API_GROUP, API_VERSION, API_VERSION_V1, CATEGORIES, CRD_NAME, KIND, PLURAL, SHORT_NAMES, SINGULAR } from '../api/constants.ts';
import { toCrdOpenApiSchema } from '../api/crd-schema.ts';
import { backupScheduleSchema, type SchemaNode } from '../api/schema.ts';
import { backupScheduleV1Schema } from '../api/schema-v1.ts';
import { CONVERSION_WEBHOOK_PATH } from '../conversion/conversion-review.ts';
import { kubeObject } from './kube-object.ts';
import { SyncWave, syncWave } from './sync-wave.ts';

/** Props of BackupScheduleCrd. */
export interface BackupScheduleCrdProps {
  /** The conversion webhook's Service, which every controller replica serves (src/manifests/conversion-webhook.ts). */
  readonly webhookService: { readonly namespace: string; readonly name: string };
  /**
   * Annotations on the CRD object besides its sync wave (cert-manager's `inject-ca-from`).
   * @default {}
   */
  readonly annotations?: Readonly<Record<string, string>>;
  /**
   * Labels on the CRD object.
   * @default {}
   */
  readonly labels?: Readonly<Record<string, string>>;
}

/**
 * `kubectl get bks` columns, in kubebuilder style. Priority 1 columns appear only with `-o wide`, after
 * Age, as the wide columns of built-in kinds do.
 */
export const PRINTER_COLUMNS: readonly ICustomResourceColumnDefinition[] = [
  { name: 'Schedule', type: 'string', jsonPath: '.spec.schedule', description: 'Cron schedule of the backups.' },
  { name: 'Suspended', type: 'boolean', jsonPath: '.spec.suspend', description: 'Whether scheduling is suspended.' },
  { name: 'Last Schedule', type: 'date', jsonPath: '.status.lastScheduleTime', description: 'When a backup was last scheduled.' },
  { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status', description: 'Ready condition status.' },
  { name: 'Last Success', type: 'date', jsonPath: '.status.lastSuccessfulTime', description: 'When a backup last succeeded.' },
  { name: 'Last Result', type: 'string', jsonPath: '.status.recentRuns[0].result', description: 'How the last finished backup Job ended (Succeeded or Failed).' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  { name: 'Time Zone', type: 'string', jsonPath: '.spec.timeZone', description: 'IANA time zone of the schedule.', priority: 1 },
  { name: 'CronJob', type: 'string', jsonPath: '.status.cronJobName', description: 'Name of the child CronJob.', priority: 1 },
  { name: 'Message', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].message', description: 'Ready condition message.', priority: 1 },
];

/**
 * One served version of a CRD of this operator: the status subresource, the printer columns and the
 * openAPIV3Schema derived from the kind's schema in src/api (descriptions, defaults, bounds, patterns,
 * CEL), the same for every kind (BackupSchedule here, Restore in restore-crd.ts).
 */
export function crdVersion(name: string, storage: boolean, schema: SchemaNode, columns: readonly ICustomResourceColumnDefinition[]) {
  return {
    name,
    served: true,
    storage,
    subresources: { status: {} },
    additionalPrinterColumns: [...columns],
    // Wire form: the x-kubernetes-* keys go out as they are.
    schema: { openAPIV3Schema: toCrdOpenApiSchema(schema) as IJSONSchemaProps },
  };
}

/**
 * The `backupschedules.kubelings.dev` CustomResourceDefinition: namespaced, versions `v1alpha1` (served)
 * and `v1` (served, stored), converted by the controller's webhook behind `webhookService` (port 443,
 * {@link CONVERSION_WEBHOOK_PATH}, ConversionReview v1), the status subresource, printer columns, short name
 * `bks`, category `backup`, and each version's openAPIV3Schema derived from src/api (descriptions,
 * defaults, bounds, patterns, CEL). The webhook's `caBundle` is left out: the controller injects it
 * (or cert-manager's cainjector), so a GitOps tool applying this file never owns, nor resets, it.
 */
export class BackupScheduleCrd extends Construct {
  /** The CRD API object. */
  public readonly crd: ApiObject;

  public constructor(scope: Construct, id: string, props: BackupScheduleCrdProps) {
    super(scope, id);
    const version = (name: string, storage: boolean, schema: SchemaNode) => crdVersion(name, storage, schema, PRINTER_COLUMNS);
    this.crd = kubeObject<ICustomResourceDefinition>(this, 'Resource', {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: CRD_NAME, labels: { ...(props.labels ?? {}) }, annotations: { ...syncWave(SyncWave.crd), ...(props.annotations ?? {}) } },
      spec: {
        group: API_GROUP,
        scope: 'Namespaced',
        names: { kind: KIND, listKind: `${KIND}List`, plural: PLURAL, singular: SINGULAR, shortNames: [...SHORT_NAMES], categories: [...CATEGORIES] },
        // v1alpha1 first: the order kubectl and discovery list versions in (by kube-aware priority anyway).
        versions: [version(API_VERSION, false, backupScheduleSchema), version(API_VERSION_V1, true, backupScheduleV1Schema)],
        conversion: {
          strategy: 'Webhook',
          webhook: {
            clientConfig: { service: { namespace: props.webhookService.namespace, name: props.webhookService.name, path: CONVERSION_WEBHOOK_PATH, port: 443 } },
            conversionReviewVersions: ['v1'],
          },
        },
      },
    });
  }
}

import { Construct } from 'constructs';
import type { ApiObject } from 'cdk8s';
import type { ICustomResourceColumnDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1/CustomResourceColumnDefinition';
import type { ICustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1/CustomResourceDefinition';
import { API_GROUP, API_VERSION_V1, CATEGORIES } from '../api/constants.ts';
import { RESTORE_KIND, RESTORE_PLURAL, RESTORE_SHORT_NAMES, restoreSchema } from '../api/restore-schema.ts';
import { crdVersion } from './crd.ts';
import { kubeObject } from './kube-object.ts';
import { SyncWave, syncWave } from './sync-wave.ts';

/** `kubectl get rst` columns. */
export const RESTORE_PRINTER_COLUMNS: readonly ICustomResourceColumnDefinition[] = [
  { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Pending, Running, Succeeded or Failed.' },
  { name: 'Backup', type: 'string', jsonPath: '.status.backup.name', description: 'The backup restored (or being restored).' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  { name: 'Job', type: 'string', jsonPath: '.status.jobName', description: 'Name of the restore Job.', priority: 1 },
];

/** Props of RestoreCrd. */
export interface RestoreCrdProps {
  /**
   * Labels on the CRD object.
   * @default {}
   */
  readonly labels?: Readonly<Record<string, string>>;
}

/**
 * The `restores.kubelings.dev` CustomResourceDefinition: namespaced, one version (`v1`, served and
 * stored, so no conversion webhook), the status subresource, short name `rst`, category `backup` (so
 * `kubectl get backup` lists schedules and restores), the openAPIV3Schema from src/api/restore-schema.ts.
 */
export class RestoreCrd extends Construct {
  /** The CRD API object. */
  public readonly crd: ApiObject;

  public constructor(scope: Construct, id: string, props: RestoreCrdProps = {}) {
    super(scope, id);
    this.crd = kubeObject<ICustomResourceDefinition>(this, 'Resource', {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `${RESTORE_PLURAL}.${API_GROUP}`, labels: { ...(props.labels ?? {}) }, annotations: syncWave(SyncWave.crd) },
      spec: {
        group: API_GROUP,
        scope: 'Namespaced',
        names: { kind: RESTORE_KIND, listKind: `${RESTORE_KIND}List`, plural: RESTORE_PLURAL, singular: RESTORE_KIND.toLowerCase(), shortNames: [...RESTORE_SHORT_NAMES], categories: [...CATEGORIES] },
        versions: [crdVersion(API_VERSION_V1, true, restoreSchema, RESTORE_PRINTER_COLUMNS)],
      },
    });
  }
}

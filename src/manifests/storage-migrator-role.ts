import type { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import type { IClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { API_GROUP, CRD_NAME, PLURAL } from '../api/index.ts';
import { storageMigrationRules } from '../migration/migration-rbac.ts';
import { kubeObject } from './kube-object.ts';
import { SyncWave, syncWave } from './sync-wave.ts';

/** Props of StorageMigratorRole. */
export interface StorageMigratorRoleProps {
  /**
   * Name of the ClusterRole.
   * @default 'backupschedule-storage-migrator'
   */
  readonly name?: string;
  /**
   * Labels on it.
   * @default {}
   */
  readonly labels?: Readonly<Record<string, string>>;
}

/**
 * The ClusterRole of `controller migrate-storage` for BackupSchedules (src/migration/migration-rbac.ts
 * derives the rules from its calls): read and rewrite every BackupSchedule, read the CRD and write its
 * `status.storedVersions`. Bind it to the ServiceAccount of the Job (or the user) that runs the
 * migration, for the time of the migration.
 */
export class StorageMigratorRole extends Construct {
  /** The ClusterRole. */
  public readonly role: ApiObject;

  public constructor(scope: Construct, id: string, props: StorageMigratorRoleProps = {}) {
    super(scope, id);
    this.role = kubeObject<IClusterRole>(this, 'Role', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: props.name ?? 'backupschedule-storage-migrator', ...(props.labels ? { labels: { ...props.labels } } : {}), annotations: syncWave(SyncWave.rbac) },
      rules: storageMigrationRules({ crdName: CRD_NAME, group: API_GROUP, plural: PLURAL }),
    });
  }
}

import type { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import type { IClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import type { IPolicyRule } from 'kubernetes-models/rbac.authorization.k8s.io/v1/PolicyRule';
import { API_GROUP, PLURAL } from '../api/index.ts';
import { RESTORE_PLURAL } from '../api/restore-schema.ts';
import { kubeObject } from './kube-object.ts';
import { SyncWave, syncWave } from './sync-wave.ts';

/** Label that makes the built-in `view` ClusterRole include a ClusterRole's rules (RBAC aggregation). */
export const AGGREGATE_TO_VIEW = 'rbac.authorization.k8s.io/aggregate-to-view';
/** Label that makes the built-in `edit` ClusterRole include a ClusterRole's rules. */
export const AGGREGATE_TO_EDIT = 'rbac.authorization.k8s.io/aggregate-to-edit';
/** Label that makes the built-in `admin` ClusterRole include a ClusterRole's rules. */
export const AGGREGATE_TO_ADMIN = 'rbac.authorization.k8s.io/aggregate-to-admin';

/** Props of UserClusterRoles. */
export interface UserClusterRolesProps {
  /**
   * Prefix of the two ClusterRoles: `<prefix>-viewer` and `<prefix>-editor`.
   * @default 'backupschedule'
   */
  readonly namePrefix?: string;
  /**
   * Labels on both, besides the aggregation labels.
   * @default {}
   */
  readonly labels?: Readonly<Record<string, string>>;
}

/** The kinds people use: BackupSchedules and Restores. */
const USER_RESOURCES = [PLURAL, RESTORE_PLURAL] as const;
const statusOf = (resources: readonly string[]): string[] => resources.map((r) => `${r}/status`);

/** Read-only access to BackupSchedules, Restores and their status. */
export const VIEWER_RULES: readonly IPolicyRule[] = [
  { apiGroups: [API_GROUP], resources: [...USER_RESOURCES, ...statusOf(USER_RESOURCES)], verbs: ['get', 'list', 'watch'] },
];

/** Full access to BackupSchedules and Restores; never their status, which only the controller writes. */
export const EDITOR_RULES: readonly IPolicyRule[] = [
  { apiGroups: [API_GROUP], resources: [...USER_RESOURCES], verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'] },
  { apiGroups: [API_GROUP], resources: statusOf(USER_RESOURCES), verbs: ['get', 'list', 'watch'] },
];

/**
 * The ClusterRoles for people and tools using BackupSchedules, aggregated into Kubernetes' user-facing
 * roles so that a RoleBinding to `view`, `edit` or `admin` in a namespace covers them:
 *
 * - `<prefix>-viewer` → `view` (and, through `edit` and `admin` including `view`'s rules, those too);
 * - `<prefix>-editor` → `edit` and `admin`.
 *
 * Creating a BackupSchedule makes the controller run a Job in that namespace (README, "Security model"):
 * `edit` and `admin` already allow creating Pods, Jobs and CronJobs and reading Secrets, so the editor
 * role adds no power to them; `view` gets no write and no Secret access. Bind `<prefix>-editor` directly
 * for someone who should manage backups without `edit`.
 */
export class UserClusterRoles extends Construct {
  /** The viewer ClusterRole. */
  public readonly viewer: ApiObject;
  /** The editor ClusterRole. */
  public readonly editor: ApiObject;

  public constructor(scope: Construct, id: string, props: UserClusterRolesProps = {}) {
    super(scope, id);
    const prefix = props.namePrefix ?? 'backupschedule';
    const annotations = syncWave(SyncWave.rbac);
    const labels = props.labels ?? {};
    this.viewer = kubeObject<IClusterRole>(this, 'Viewer', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: `${prefix}-viewer`, labels: { ...labels, [AGGREGATE_TO_VIEW]: 'true' }, annotations },
      rules: [...VIEWER_RULES],
    });
    this.editor = kubeObject<IClusterRole>(this, 'Editor', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: `${prefix}-editor`, labels: { ...labels, [AGGREGATE_TO_EDIT]: 'true', [AGGREGATE_TO_ADMIN]: 'true' }, annotations },
      rules: [...EDITOR_RULES],
    });
  }
}

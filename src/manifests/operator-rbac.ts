import { Construct } from 'constructs';
import type { ApiObject } from 'cdk8s';
import type { IServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import type { IClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import type { IClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import type { IPolicyRule } from 'kubernetes-models/rbac.authorization.k8s.io/v1/PolicyRule';
import type { IRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import type { IRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { API_GROUP, CRD_NAME, PLURAL } from '../api/constants.ts';
import { RESTORE_PLURAL } from '../api/restore-schema.ts';
import { kubeObject } from './kube-object.ts';
import { SyncWave, syncWave } from './sync-wave.ts';

/** Props of OperatorRbac. */
export interface OperatorRbacProps {
  /** Namespace of the ServiceAccount and the Lease. */
  readonly namespace: string;
  /** Name of the ServiceAccount, ClusterRole, ClusterRoleBinding. */
  readonly name: string;
  /** Name of the leader-election Lease (the Role is limited to it). */
  readonly leaseName: string;
  /**
   * Name of the conversion webhook's certificate Secret: when set, a Role for that one Secret and the
   * rule for the one CRD whose caBundle the controller injects. Unset: no such rights (no webhook, or
   * cert-manager keeps its certificate and injects the CA).
   * @default undefined
   */
  readonly webhookSecretName?: string;
  /**
   * Namespaces the controller watches (`--namespace`); empty = all. When set, the ClusterRole's rules
   * are granted in those namespaces only (a RoleBinding of it in each), so the ServiceAccount's token
   * may not list Pods nor create Jobs anywhere else; the CRD caBundle rule, cluster-scoped, gets a
   * ClusterRole of its own. The namespaces must exist before these objects are applied.
   * @default [] (a ClusterRoleBinding: every namespace)
   */
  readonly watchedNamespaces?: readonly string[];
  /**
   * Labels on every object.
   * @default {}
   */
  readonly labels?: Readonly<Record<string, string>>;
}

/**
 * The rules of the controller's ClusterRole: exactly the calls it makes (docs/design.md, "RBAC"). BackupSchedules
 * are listed and watched (the informer cache answers reads); `get` reads one whole when the cache holds
 * only a stub of it (over its byte budget: src/runtime/cache-policy.ts), which reads nothing `list` does
 * not already; status is written with PUT (`update`, carrying resourceVersion). CronJobs are listed and watched by label (only the
 * operator's children), created, and written with JSON merge patches (`patch`, carrying resourceVersion:
 * the cache keeps only what reconcile reads, so a PUT of it would delete other writers' metadata);
 * `get` reads the one CronJob a create found existing but uncached (a child whose labels were removed,
 * an orphan to adopt, a foreign CronJob). No `delete` on CronJobs (the garbage collector follows the
 * ownerReference); `backupschedules/finalizers: update` is
 * required to set `blockOwnerDeletion` where OwnerReferencesPermissionEnforcement is on. Events are
 * core/v1 Events. A ClusterRole even when namespaces are restricted: simpler, one object.
 */
export const CLUSTER_RULES: readonly IPolicyRule[] = [
  { apiGroups: [API_GROUP], resources: [PLURAL], verbs: ['get', 'list', 'watch'] },
  { apiGroups: [API_GROUP], resources: [`${PLURAL}/status`], verbs: ['update'] },
  { apiGroups: [API_GROUP], resources: [`${PLURAL}/finalizers`], verbs: ['update'] },
  // Restores (docs/restore.md) as BackupSchedules: listed and watched (get for a stub), status written
  // with PUT, finalizers for the restore Job's blockOwnerDeletion.
  { apiGroups: [API_GROUP], resources: [RESTORE_PLURAL], verbs: ['get', 'list', 'watch'] },
  { apiGroups: [API_GROUP], resources: [`${RESTORE_PLURAL}/status`], verbs: ['update'] },
  { apiGroups: [API_GROUP], resources: [`${RESTORE_PLURAL}/finalizers`], verbs: ['update'] },
  { apiGroups: ['batch'], resources: ['cronjobs'], verbs: ['get', 'list', 'watch', 'create', 'patch'] },
  // The backup Jobs, for how the runs went (status.recentRuns, LastBackupSucceeded), read from the
  // informer's cache; and no Pods (docs/backup-outcomes.md says why). `create`: each Restore's one Job
  // (never updated nor deleted: the garbage collector follows its ownerReference); `get`: that Job when
  // the Restore's status names it and the cache does not hold it, to tell a lagging cache from a
  // deleted Job (a Restore runs at most once).
  { apiGroups: ['batch'], resources: ['jobs'], verbs: ['get', 'list', 'watch', 'create'] },
  // A finished restore Job's Pod, for the runner's termination message (status.backup): one LIST per
  // finished Restore, by the Job's uid, a few Pods at most. Never watch: that would stream every Pod
  // spec of the watched namespaces (docs/restore.md, "Reading the runner's report").
  { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
];

/** The Lease rule: only the one Lease the synth ships, so no `create`. */
export function leaseRules(leaseName: string): IPolicyRule[] {
  return [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: [leaseName], verbs: ['get', 'update'] }];
}

/** The CRD rule of the conversion webhook: read and patch the caBundle of this one CRD. */
export const CRD_CA_BUNDLE_RULE: IPolicyRule = { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], resourceNames: [CRD_NAME], verbs: ['get', 'patch'] };

/** The certificate Secret rule: only the one Secret the synth ships, so no `create`. */
export function webhookSecretRules(secretName: string): IPolicyRule[] {
  return [{ apiGroups: [''], resources: ['secrets'], resourceNames: [secretName], verbs: ['get', 'update'] }];
}

/**
 * ServiceAccount, ClusterRole + ClusterRoleBinding (or, with `watchedNamespaces`, a RoleBinding of the
 * ClusterRole in each, and the CRD rule in a ClusterRole of its own), a namespaced Role + RoleBinding
 * for the Lease, and with `webhookSecretName` a Role + RoleBinding for the certificate Secret.
 */
export class OperatorRbac extends Construct {
  /** The controller's ServiceAccount. */
  public readonly serviceAccount: ApiObject;

  public constructor(scope: Construct, id: string, props: OperatorRbacProps) {
    super(scope, id);
    const labels = { ...(props.labels ?? {}) };
    const annotations = syncWave(SyncWave.rbac);
    const { name, namespace } = props;
    const subject = { kind: 'ServiceAccount', name, namespace };
    this.serviceAccount = kubeObject<IServiceAccount>(this, 'ServiceAccount', {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name, namespace, labels, annotations },
      automountServiceAccountToken: true,
    });
    const clusterRole = (id: string, roleName: string, rules: IPolicyRule[]): void => {
      kubeObject<IClusterRole>(this, id, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: roleName, labels, annotations }, rules });
    };
    const clusterRoleBinding = (id: string, roleName: string): void => {
      kubeObject<IClusterRoleBinding>(this, id, {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: roleName, labels, annotations },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
        subjects: [subject],
      });
    };
    const watched = props.watchedNamespaces ?? [];
    if (watched.length === 0) {
      clusterRole('ClusterRole', name, props.webhookSecretName ? [...CLUSTER_RULES, CRD_CA_BUNDLE_RULE] : [...CLUSTER_RULES]);
      clusterRoleBinding('ClusterRoleBinding', name);
    } else {
      // A RoleBinding to a ClusterRole grants its rules in the binding's namespace only.
      clusterRole('ClusterRole', name, [...CLUSTER_RULES]);
      for (const watchedNamespace of watched) {
        kubeObject<IRoleBinding>(this, `RoleBinding-${watchedNamespace}`, {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          metadata: { name, namespace: watchedNamespace, labels, annotations },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
          subjects: [subject],
        });
      }
      if (props.webhookSecretName) {
        clusterRole('CrdClusterRole', `${name}-crd-ca-bundle`, [CRD_CA_BUNDLE_RULE]);
        clusterRoleBinding('CrdClusterRoleBinding', `${name}-crd-ca-bundle`);
      }
    }
    // A namespaced Role and its binding to the ServiceAccount, for rules limited to one object by name.
    const namespacedRole = (idPrefix: string, roleName: string, rules: IPolicyRule[]): void => {
      kubeObject<IRole>(this, `${idPrefix}Role`, {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: roleName, namespace, labels, annotations },
        rules,
      });
      kubeObject<IRoleBinding>(this, `${idPrefix}RoleBinding`, {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: roleName, namespace, labels, annotations },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: roleName },
        subjects: [subject],
      });
    };
    namespacedRole('LeaderElection', `${name}-leader-election`, leaseRules(props.leaseName));
    if (props.webhookSecretName) namespacedRole('WebhookCertificate', `${name}-webhook-certificate`, webhookSecretRules(props.webhookSecretName));
  }
}

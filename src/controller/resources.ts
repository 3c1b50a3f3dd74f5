/** The resource types the controller talks to, as {@link ResourceType}s for src/kube's typed clients. */
import { API_GROUP, API_VERSION_V1, KIND, PLURAL, type v1 } from '../api/index.ts';
import type { KubeObject, ObjectMeta } from '../kube/object.ts';
import { RESTORE_KIND, RESTORE_PLURAL } from '../api/restore-schema.ts';
import type { ResourceType } from '../kube/resource-client.ts';

/** A BackupSchedule as it comes from the API server (metadata always present), in v1. */
export type BackupScheduleObject = v1.BackupSchedule & KubeObject & { metadata: ObjectMeta };

/**
 * `backupschedules.kubelings.dev/v1`: the storage version, so once the storage is migrated the
 * controller's reads and status writes never wait on the conversion webhook (before, objects still
 * stored in v1alpha1 reach it through the webhook); objects written in v1alpha1 reach it converted.
 */
export const BACKUP_SCHEDULES: ResourceType = { group: API_GROUP, version: API_VERSION_V1, plural: PLURAL, kind: KIND, namespaced: true };

/** `restores.kubelings.dev/v1`: the only version. */
export const RESTORES: ResourceType = { group: API_GROUP, version: API_VERSION_V1, plural: RESTORE_PLURAL, kind: RESTORE_KIND, namespaced: true };

/** `cronjobs.batch/v1`. */
export const CRON_JOBS: ResourceType = { group: 'batch', version: 'v1', plural: 'cronjobs', kind: 'CronJob', namespaced: true };

/** Core `events/v1` (what `kubectl describe` shows). */
export const EVENTS: ResourceType = { group: '', version: 'v1', plural: 'events', kind: 'Event', namespaced: true };

/** Core `pods/v1`: listed (never watched) once per finished Restore, for its runner's termination message. */
export const PODS: ResourceType = { group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true };

/** `jobs.batch/v1`: the backup Jobs the child CronJobs start (read), and the restore Jobs (created by the Restore controller). */
export const JOBS: ResourceType = { group: 'batch', version: 'v1', plural: 'jobs', kind: 'Job', namespaced: true };

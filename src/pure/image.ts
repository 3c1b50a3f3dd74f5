/** This release's version: the tag of the operator's image, and the controller's User-Agent. */
export const OPERATOR_VERSION = '0.2.0';

/**
 * The operator's image of this release: what dist/'s Deployment runs. The same image holds the `backup`
 * runner the child CronJobs run, but which tag they run is {@link DEFAULT_BACKUP_IMAGE}.
 */
export const DEFAULT_IMAGE = `ghcr.io/kubelings/backupschedule-operator:${OPERATOR_VERSION}`;

/**
 * The image backup Jobs run when a spec names none (the controller's `--backup-image`): the operator
 * image of the last release whose `backup` runner (src/backup/, the contract in backup-contract.ts)
 * changed. 0.2.0 runs 0.1.0's runner: it already takes every `--keep-*` flag v1 emits. It moves with the
 * runner only, not with every release, because it is in every child: a new value rewrites every child
 * CronJob once, and an operator upgrade that changes nothing a child runs should write none.
 */
export const DEFAULT_BACKUP_IMAGE = 'ghcr.io/kubelings/backupschedule-operator:0.1.0';

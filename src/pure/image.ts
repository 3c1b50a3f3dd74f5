/** This release's version: the tag of the operator's image, and the controller's User-Agent. */
export const OPERATOR_VERSION = '0.3.0';

/**
 * The operator's image of this release: what dist/'s Deployment runs. The same image holds the `backup`
 * runner the child CronJobs run, but which tag they run is {@link DEFAULT_BACKUP_IMAGE}.
 */
export const DEFAULT_IMAGE = `ghcr.io/kubelings/backupschedule-operator:${OPERATOR_VERSION}`;

/**
 * The image backup and Restore Jobs run when a spec names none (the controller's `--backup-image`): the
 * operator image of the last release whose `backup` runner (src/backup/, the contract in
 * backup-contract.ts) changed. It moves with the runner only, not with every release, because it is in
 * every child: a new value rewrites every child CronJob once, and an operator upgrade that changes
 * nothing a child runs should write none.
 *
 * 0.3.0 moved it from 0.1.0 to this release's own image ({@link DEFAULT_IMAGE}) because its runner
 * changed: the object-store destination (`--destination-url`, `--s3-*`), encryption (`--age-recipient`,
 * to an object store or a claim), the `restore` subcommand Restore Jobs run, retention that counts only
 * verified backups, and a new archive format (pax: sparse files, hard links, mtimes past 2038). 0.1.0's
 * runner rejects the new flags and has no `restore`, so object-store, encrypted and Restore Jobs would
 * fail with it, and claim backups would miss the hardening. Pinning `backupImage` to 0.1.0's image keeps
 * 0.2.0's children byte-identical through the upgrade (a two-step upgrade, see the README).
 */
export const DEFAULT_BACKUP_IMAGE = DEFAULT_IMAGE;

/**
 * The project's container image: the controller (Deployment) and the `backup` runner (the child
 * CronJob's container) are the same image. One constant, so the two never drift apart.
 */
export const DEFAULT_IMAGE = 'ghcr.io/kubelings/backupschedule-operator:0.1.0';

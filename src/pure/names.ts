import { createHash } from 'node:crypto';

/**
 * A CronJob name is at most 52 characters: the CronJob controller appends an 11-character suffix
 * (`-<unix minutes>`) to name its Jobs, and a Job name must fit a 63-character label value.
 */
export const MAX_CHILD_NAME_LENGTH = 52;
/** Label values are at most 63 characters (and names can have 253). */
export const MAX_LABEL_VALUE_LENGTH = 63;
/** Hex characters of sha256 kept in a shortened name: 40 bits, collisions are negligible per namespace. */
export const HASH_LENGTH = 10;

/**
 * `value` unchanged when it has at most `max` characters; otherwise its first
 * `max - HASH_LENGTH - 1` characters (trailing `-`/`.` removed so the result stays DNS-1123 and
 * label-safe), a `-`, and the first 10 hex characters of sha256(value). Stable: the same value always
 * gives the same result; two long values sharing a prefix still differ.
 */
export function truncateWithHash(value: string, max: number): string {
  if (value.length <= max) return value;
  const hash = createHash('sha256').update(value).digest('hex').slice(0, HASH_LENGTH);
  const prefix = value.slice(0, max - HASH_LENGTH - 1).replace(/[-._]+$/, '');
  return `${prefix}-${hash}`;
}

/**
 * Name of the child CronJob of a BackupSchedule named `scheduleName`: ≤ 52 characters and a DNS-1123
 * *label* (no dots: the Pods' hostnames derive from it, and Kubernetes recommends label-style CronJob
 * names). A name of ≤ 52 characters without dots is used unchanged; otherwise dots become dashes and the
 * result is `<first ≤ 41 characters>-<sha256(original name)[0:10]>`, so `a.b` and `a-b` never collide.
 */
export function childNameFor(scheduleName: string): string {
  if (scheduleName.length <= MAX_CHILD_NAME_LENGTH && !scheduleName.includes('.')) return scheduleName;
  const hash = createHash('sha256').update(scheduleName).digest('hex').slice(0, HASH_LENGTH);
  const prefix = scheduleName.replace(/\./g, '-').slice(0, MAX_CHILD_NAME_LENGTH - HASH_LENGTH - 1).replace(/-+$/, '');
  return `${prefix}-${hash}`;
}

/** A label value naming the BackupSchedule `scheduleName`: ≤ 63 characters. */
export function labelValueFor(scheduleName: string): string {
  return truncateWithHash(scheduleName, MAX_LABEL_VALUE_LENGTH);
}

/**
 * The DNS names of a Service as a webhook certificate must carry them: `<service>.<namespace>.svc`
 * (the name kube-apiserver dials for a `clientConfig.service`) and the long `….svc.cluster.local` form.
 */
export function webhookDnsNames(serviceName: string, namespace: string): string[] {
  return [`${serviceName}.${namespace}.svc`, `${serviceName}.${namespace}.svc.cluster.local`];
}

/**
 * Name of the controller's readiness check that a conversion webhook certificate is loaded
 * (`/readyz/<name>`): the Deployment's readiness probe when it serves the webhook.
 */
export const WEBHOOK_CERTIFICATE_CHECK = 'conversion-webhook-certificate';

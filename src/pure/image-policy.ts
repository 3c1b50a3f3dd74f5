/**
 * Which images backup Jobs may run. Creating a BackupSchedule makes the controller create a CronJob in
 * the schedule's namespace, so `spec.image` would otherwise let anyone who may create BackupSchedules
 * run any image there on a schedule, with the schedule's Secret and volumes mounted. The operator's
 * administrators decide instead, with the controller flag `--allowed-backup-images`; the controller's own
 * `--backup-image` (what a schedule without `spec.image` runs) is always allowed.
 */

import { suspendedCopy } from './child-suspend.ts';
import { wildcardRegExp } from './wildcard-pattern.ts';

/** The controller flag holding the allow-list (named in conditions and errors). */
export const ALLOWED_IMAGES_FLAG = '--allowed-backup-images';

/**
 * Image patterns: an exact reference, or one with `*` standing for any run of characters (including
 * `/`, `:` and `@`): `ghcr.io/kubelings/backupschedule-operator:*`, `registry.example.com/backup/*`.
 * Matching is on the reference as written: `busybox` and `docker.io/library/busybox` are different
 * strings. End a registry or repository prefix with `/` or `:` before the `*`, or
 * `registry.example.com*` also matches `registry.example.com.evil.io/x`.
 */
export function imageMatches(image: string, pattern: string): boolean {
  if (!pattern.includes('*')) return image === pattern;
  return wildcardRegExp(pattern, '.*', 's').test(image);
}

/** Whether a backup Job may run `image`: it is `defaultImage`, or matches one of `patterns`. */
export function imageAllowed(image: string, defaultImage: string, patterns: readonly string[]): boolean {
  return image === defaultImage || patterns.some((p) => imageMatches(image, p));
}

/**
 * Why a pattern is unusable, or undefined when it is fine: empty, too long, or with whitespace or
 * control characters (never part of an image reference: most likely a quoting mistake). A lone `*`
 * is accepted — it allows every image, which the administrators may decide — and the README says
 * what that grants.
 */
export function imagePatternProblem(pattern: string): string | undefined {
  if (pattern === '') return 'an image pattern must not be empty';
  if (/[\s\u0000-\u001f]/.test(pattern)) return `image pattern ${JSON.stringify(pattern)} contains whitespace or control characters`;
  if (pattern.length > 512) return `image pattern ${JSON.stringify(pattern.slice(0, 40))}… is longer than 512 characters`;
  return undefined;
}

interface PodTemplateView {
  spec?: { jobTemplate?: { spec?: { template?: { spec?: { containers?: { image?: unknown }[]; initContainers?: { image?: unknown }[] } } } }; suspend?: unknown };
}

/** The images a CronJob's Jobs run (init containers included). */
export function cronJobImages(cronJob: object): string[] {
  const pod = (cronJob as PodTemplateView).spec?.jobTemplate?.spec?.template?.spec;
  return [...(pod?.initContainers ?? []), ...(pod?.containers ?? [])].map((c) => c.image).filter((i): i is string => typeof i === 'string');
}

/**
 * The CronJob suspended, when it runs an image `allowed` refuses and is not suspended yet; otherwise
 * undefined. For a child whose schedule now names a disallowed image (or whose image the flag no longer
 * allows): it must not keep running, and the controller may update but not delete CronJobs. Input not mutated.
 */
export function suspendIfDisallowed<T extends object>(cronJob: T, allowed: (image: string) => boolean): T | undefined {
  return cronJobImages(cronJob).every(allowed) ? undefined : suspendedCopy(cronJob);
}

/**
 * Suspending a child the controller may no longer let run (an image or an endpoint the allow-lists now
 * refuse): the controller may update CronJobs but not delete them.
 */

/** The CronJob with `spec.suspend: true`, or undefined when it is suspended already (or has no spec). Input not mutated. */
export function suspendedCopy<T extends object>(cronJob: T): T | undefined {
  const spec = (cronJob as { spec?: { suspend?: unknown } }).spec;
  if (spec === undefined || spec.suspend === true) return undefined;
  const copy = JSON.parse(JSON.stringify(cronJob)) as T & { spec: { suspend?: boolean } };
  copy.spec.suspend = true;
  return copy;
}

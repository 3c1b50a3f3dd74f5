import { TIME_ZONE_NAMES } from './time-zone-names.ts';

/**
 * Time zone names as the CronJob API checks `spec.timeZone` (pkg/apis/batch/validation
 * validateTimeZone): each `/`-separated part 1-14 characters of `[A-Za-z0-9._+-]`, not `.`, `..` or
 * starting with `-`; not `Local` in any case; and loadable by Go's `time.LoadLocation`, which reads the
 * IANA tz database by exact, case-sensitive file name (kube-apiserver embeds Go's copy). So `utc`,
 * `europe/berlin` and `US/Pacific-New` (removed in tzdata 2020b) are rejected, while backward links
 * such as `US/Pacific` and `Etc/UTC` are accepted. The names come from src/api/time-zone-names.ts.
 */

const KNOWN = new Set(TIME_ZONE_NAMES);
const PART = /^[A-Za-z.\-_0-9+]{1,14}$/;

/** Go `time.LoadLocation`'s error for `name`, or undefined when it loads. */
export function loadLocationError(name: string): string | undefined {
  if (name === '' || name === 'UTC' || name === 'Local') return undefined;
  if (name.includes('..') || name.startsWith('/') || name.startsWith('\\')) return 'time: invalid location name';
  return KNOWN.has(name) ? undefined : `unknown time zone ${name}`;
}

/** The first thing kube-apiserver says of a CronJob `spec.timeZone` value, or undefined when it accepts it. */
export function timeZoneError(name: string): string | undefined {
  if (name === '') return 'timeZone must be nil or non-empty string';
  if (name.split('/').some((part) => part === '.' || part === '..' || part.startsWith('-') || !PART.test(part))) {
    return `unknown time zone ${name}`;
  }
  if (name.toLowerCase() === 'local') return 'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones';
  return loadLocationError(name);
}

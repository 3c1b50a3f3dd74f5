import type { KubeObject, StatusCause } from '../../../src/kube/object.ts';
import { fieldErrors } from '../schema/causes.ts';
import { cronParseError, loadLocationError } from './cron-schedule.ts';
import { obj, str } from './json.ts';
import { validateObjectMeta } from './meta-validation.ts';
import { nameIsDNSSubdomain } from './name-rules.ts';
import { validatePodTemplateSpec } from './pod-validation.ts';
import { validatePodFailurePolicy } from './pod-failure-policy.ts';

/** Go's `validTimeZoneCharacters`: IANA file name components (pkg/apis/batch/validation). */
const validTimeZoneCharacters = /^[A-Za-z.\-_0-9+]{1,14}$/;

/**
 * `ValidateCronJobCreate`/`ValidateCronJobUpdate` (pkg/apis/batch/validation): metadata, schedule,
 * startingDeadlineSeconds, timeZone, concurrencyPolicy, the job template, history limits; on create
 * the 52-character name limit comes last (the controller appends an 11-character suffix to job names).
 */
export function validateCronJob(cronJob: KubeObject, old?: KubeObject): StatusCause[] {
  const errs = validateObjectMeta(cronJob.metadata, nameIsDNSSubdomain);
  const spec = obj(cronJob['spec']) ?? {};
  const oldSpec = old ? (obj(old['spec']) ?? {}) : undefined;
  const schedule = str(spec['schedule']);
  if (schedule === '') {
    errs.push(fieldErrors.required('spec.schedule'));
  } else {
    const parseError = cronParseError(schedule);
    if (parseError) errs.push(fieldErrors.invalid('spec.schedule', schedule, parseError));
    const allowTZ = oldSpec !== undefined && str(oldSpec['schedule']).includes('TZ');
    if (allowTZ && schedule.includes('TZ') && spec['timeZone'] != null) {
      errs.push(fieldErrors.invalid('spec.schedule', schedule, 'cannot use both timeZone field and TZ or CRON_TZ in schedule'));
    } else if (!allowTZ && schedule.includes('TZ')) {
      errs.push(fieldErrors.invalid('spec.schedule', schedule, 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead'));
    }
  }
  nonNegative(spec, 'startingDeadlineSeconds', 'spec', errs);
  if (!oldSpec || oldSpec['timeZone'] !== spec['timeZone']) errs.push(...validateTimeZone(spec['timeZone']));
  const policy = str(spec['concurrencyPolicy']);
  if (policy === '') errs.push(fieldErrors.required('spec.concurrencyPolicy'));
  else if (!['Allow', 'Forbid', 'Replace'].includes(policy)) errs.push(fieldErrors.notSupported('spec.concurrencyPolicy', policy, ['Allow', 'Forbid', 'Replace']));
  errs.push(...validateJobTemplateSpec(spec['jobTemplate'], 'spec.jobTemplate'));
  nonNegative(spec, 'successfulJobsHistoryLimit', 'spec', errs);
  nonNegative(spec, 'failedJobsHistoryLimit', 'spec', errs);
  const name = cronJob.metadata.name ?? '';
  if (!old && name.length > 52) errs.push(fieldErrors.invalid('metadata.name', name, 'must be no more than 52 characters'));
  return errs;
}

function validateTimeZone(timeZone: unknown): StatusCause[] {
  if (timeZone === undefined || timeZone === null) return [];
  const tz = str(timeZone);
  if (tz === '') return [fieldErrors.invalid('spec.timeZone', tz, 'timeZone must be nil or non-empty string')];
  for (const part of tz.split('/')) {
    if (part === '.' || part === '..' || part.startsWith('-') || !validTimeZoneCharacters.test(part)) {
      return [fieldErrors.invalid('spec.timeZone', tz, `unknown time zone ${tz}`)];
    }
  }
  const errs: StatusCause[] = [];
  if (tz.toLowerCase() === 'local') {
    errs.push(fieldErrors.invalid('spec.timeZone', tz, 'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones'));
  }
  const loadError = loadLocationError(tz);
  if (loadError) errs.push(fieldErrors.invalid('spec.timeZone', tz, loadError));
  return errs;
}

/** `ValidateJobTemplateSpec`: the job spec, plus no selector and no manualSelector (they are generated). */
function validateJobTemplateSpec(template: unknown, path: string): StatusCause[] {
  const spec = obj(obj(template)?.['spec']) ?? {};
  const errs = validateJobSpec(spec, `${path}.spec`);
  if (spec['selector'] != null) errs.push(fieldErrors.invalid(`${path}.spec.selector`, spec['selector'], '`selector` will be auto-generated'));
  if (spec['manualSelector'] === true) errs.push(fieldErrors.notSupported(`${path}.spec.manualSelector`, true, ['nil', 'false']));
  return errs;
}

/**
 * `validateJobSpec`: non-negative counters, completionMode, podReplacementPolicy, the pod template,
 * podFailurePolicy (pod-failure-policy.ts),
 * and restartPolicy OnFailure or Never (`Required value: valid values: "OnFailure", "Never"` when
 * empty or `Always`, which pod defaulting puts there when the request left it out).
 */
export function validateJobSpec(spec: Record<string, unknown>, path: string): StatusCause[] {
  const errs: StatusCause[] = [];
  for (const field of ['parallelism', 'completions', 'activeDeadlineSeconds', 'backoffLimit', 'ttlSecondsAfterFinished']) {
    nonNegative(spec, field, path, errs);
  }
  const mode = spec['completionMode'];
  if (mode != null && mode !== 'NonIndexed' && mode !== 'Indexed') {
    errs.push(fieldErrors.notSupported(`${path}.completionMode`, mode, ['NonIndexed', 'Indexed']));
  }
  if (mode === 'Indexed' && spec['completions'] == null) errs.push(fieldErrors.required(`${path}.completions`, 'when completion mode is Indexed'));
  const replacement = spec['podReplacementPolicy'];
  if (replacement != null && replacement !== 'Failed' && replacement !== 'TerminatingOrFailed') {
    errs.push(fieldErrors.notSupported(`${path}.podReplacementPolicy`, replacement, ['Failed', 'TerminatingOrFailed']));
  }
  errs.push(...validatePodTemplateSpec(spec['template'], `${path}.template`));
  errs.push(...validatePodFailurePolicy(spec, path));
  const restartPolicy = str(obj(obj(spec['template'])?.['spec'])?.['restartPolicy']);
  const at = `${path}.template.spec.restartPolicy`;
  if (restartPolicy === '' || restartPolicy === 'Always') errs.push(fieldErrors.required(at, 'valid values: "OnFailure", "Never"'));
  else if (restartPolicy !== 'OnFailure' && restartPolicy !== 'Never') errs.push(fieldErrors.notSupported(at, restartPolicy, ['OnFailure', 'Never']));
  return errs;
}

/** `ValidateJob`: metadata and spec (the selector is generated by the server before validation). */
export function validateJob(job: KubeObject): StatusCause[] {
  const errs = validateObjectMeta(job.metadata, nameIsDNSSubdomain);
  errs.push(...validateJobSpec(obj(job['spec']) ?? {}, 'spec'));
  return errs;
}

function nonNegative(spec: Record<string, unknown>, field: string, path: string, errs: StatusCause[]): void {
  const value = spec[field];
  if (typeof value === 'number' && value < 0) errs.push(fieldErrors.invalid(`${path}.${field}`, value, 'must be greater than or equal to 0'));
}

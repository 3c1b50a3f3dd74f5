/**
 * A Job spec's `podFailurePolicy` (batch/v1, beta and on by default since 1.26, GA in 1.31), on Jobs and
 * on CronJob job templates alike: `validatePodFailurePolicy` of pkg/apis/batch/validation and the
 * defaulting of `SetDefaults_PodFailurePolicyOnPodConditionsPattern` (status True), which defaulter-gen
 * calls wherever the type appears, so a CronJob's `jobTemplate.spec` gets it too.
 */
import type { StatusCause } from '../../../src/kube/object.ts';
import { fieldErrors } from '../schema/causes.ts';
import { obj, objs, setDefault, str } from './json.ts';

const MAX_RULES = 20;
const MAX_EXIT_CODE_VALUES = 255;
const MAX_POD_CONDITIONS = 20;
const ACTIONS = ['Count', 'FailIndex', 'FailJob', 'Ignore'];
const OPERATORS = ['In', 'NotIn'];
const CONDITION_STATUSES = ['False', 'True', 'Unknown'];

/** Defaults `status: True` on every onPodConditions pattern of `spec.podFailurePolicy`, in place. */
export function defaultPodFailurePolicy(spec: Record<string, unknown>): void {
  for (const rule of objs(obj(spec['podFailurePolicy'])?.['rules'])) {
    for (const pattern of objs(rule['onPodConditions'])) setDefault(pattern, 'status', 'True');
  }
}

/** `validatePodFailurePolicy` plus the restartPolicy Never it requires; `path` is the job spec's. */
export function validatePodFailurePolicy(spec: Record<string, unknown>, path: string): StatusCause[] {
  const policy = obj(spec['podFailurePolicy']);
  if (!policy) return [];
  const errs: StatusCause[] = [];
  const at = `${path}.podFailurePolicy`;
  const rules = Array.isArray(policy['rules']) ? (policy['rules'] as unknown[]) : [];
  if (rules.length > MAX_RULES) errs.push(fieldErrors.tooMany(`${at}.rules`, rules.length, MAX_RULES));
  const podSpec = obj(obj(spec['template'])?.['spec']) ?? {};
  const containerNames = new Set([...objs(podSpec['containers']), ...objs(podSpec['initContainers'])].map((c) => str(c['name'])));
  rules.forEach((raw, i) => errs.push(...validateRule(spec, obj(raw) ?? {}, `${at}.rules[${i}]`, containerNames)));
  const restartPolicy = str(podSpec['restartPolicy']);
  if (restartPolicy !== 'Never') errs.push(fieldErrors.invalid(`${path}.template.spec.restartPolicy`, restartPolicy, 'only "Never" is supported when podFailurePolicy is specified'));
  return errs;
}

function validateRule(spec: Record<string, unknown>, rule: Record<string, unknown>, at: string, containerNames: ReadonlySet<string>): StatusCause[] {
  const errs: StatusCause[] = [];
  const action = str(rule['action']);
  if (action === 'FailIndex') {
    if (spec['backoffLimitPerIndex'] == null) errs.push(fieldErrors.invalid(`${at}.action`, action, 'requires the backoffLimitPerIndex to be set'));
  } else if (!ACTIONS.includes(action)) {
    errs.push(fieldErrors.notSupported(`${at}.action`, action, ACTIONS));
  }
  const onExitCodes = obj(rule['onExitCodes']);
  const onPodConditions = objs(rule['onPodConditions']);
  if (onExitCodes) errs.push(...validateOnExitCodes(onExitCodes, `${at}.onExitCodes`, containerNames));
  if (onPodConditions.length > MAX_POD_CONDITIONS) errs.push(fieldErrors.tooMany(`${at}.onPodConditions`, onPodConditions.length, MAX_POD_CONDITIONS));
  onPodConditions.forEach((pattern, j) => {
    const status = str(pattern['status']);
    if (!CONDITION_STATUSES.includes(status)) errs.push(fieldErrors.notSupported(`${at}.onPodConditions[${j}].status`, status, CONDITION_STATUSES));
    if (str(pattern['type']) === '') errs.push(fieldErrors.required(`${at}.onPodConditions[${j}].type`));
  });
  if (onExitCodes && onPodConditions.length > 0) errs.push({ reason: 'FieldValueInvalid', message: 'Invalid value: specifying both OnExitCodes and OnPodConditions is not supported', field: at });
  if (!onExitCodes && onPodConditions.length === 0) errs.push({ reason: 'FieldValueInvalid', message: 'Invalid value: specifying one of OnExitCodes and OnPodConditions is required', field: at });
  return errs;
}

function validateOnExitCodes(onExitCodes: Record<string, unknown>, at: string, containerNames: ReadonlySet<string>): StatusCause[] {
  const errs: StatusCause[] = [];
  const operator = str(onExitCodes['operator']);
  if (!OPERATORS.includes(operator)) errs.push(fieldErrors.notSupported(`${at}.operator`, operator, OPERATORS));
  const containerName = onExitCodes['containerName'];
  if (typeof containerName === 'string' && !containerNames.has(containerName)) {
    errs.push(fieldErrors.invalid(`${at}.containerName`, containerName, 'must be one of the container or initContainer names in the pod template'));
  }
  const values = Array.isArray(onExitCodes['values']) ? (onExitCodes['values'] as number[]) : [];
  if (values.length === 0) errs.push(fieldErrors.invalid(`${at}.values`, values, 'at least one value is required'));
  else if (values.length > MAX_EXIT_CODE_VALUES) errs.push(fieldErrors.tooMany(`${at}.values`, values.length, MAX_EXIT_CODE_VALUES));
  const seen = new Set<number>();
  values.forEach((value, j) => {
    if (operator === 'In' && value === 0) errs.push(fieldErrors.invalid(`${at}.values[${j}]`, value, 'must not be 0 for the In operator'));
    if (seen.has(value)) errs.push(fieldErrors.duplicate(`${at}.values[${j}]`, value));
    seen.add(value);
  });
  if (values.some((v, j) => j > 0 && values[j - 1]! > v)) errs.push(fieldErrors.invalid(`${at}.values`, values, 'must be ordered'));
  return errs;
}

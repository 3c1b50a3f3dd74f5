import type { KubeObject, StatusCause } from '../../../src/kube/object.ts';
import { fieldErrors } from '../schema/causes.ts';
import { validateCronJob, validateJob } from './batch-validation.ts';
import { validateCoreEvent, validateEventsV1Event } from './event-validation.ts';
import { obj, str } from './json.ts';
import { validateObjectMeta } from './meta-validation.ts';
import { nameIsPathSegment } from './name-rules.ts';
import { nameValidatorFor } from './name-validation.ts';

/**
 * Validation of a built-in object as kube-apiserver's strategies run it, returning the causes of a
 * 422 in kube's order. CronJobs, Jobs, Leases and CRD names get their kind-specific checks; every
 * other kind gets `ValidateObjectMeta` with its name rule. `old` marks an update.
 */
export function validateBuiltin(group: string, resource: string, object: KubeObject, old?: KubeObject): StatusCause[] {
  switch (`${resource}.${group}`) {
    case 'cronjobs.batch':
      return validateCronJob(object, old);
    case 'jobs.batch':
      return validateJob(object);
    case 'leases.coordination.k8s.io':
      return [...validateObjectMeta(object.metadata, nameValidatorFor(resource)), ...validateLeaseSpec(obj(object['spec']) ?? {})];
    case 'events.':
      return withPathSegmentName(object, validateCoreEvent(object));
    case 'events.events.k8s.io':
      return withPathSegmentName(object, validateEventsV1Event(object));
    case 'customresourcedefinitions.apiextensions.k8s.io':
      return [...validateObjectMeta(object.metadata, nameValidatorFor(resource)), ...validateCrdName(object)];
    default:
      return validateObjectMeta(object.metadata, nameValidatorFor(resource));
  }
}

/**
 * The generic registry validates every new object's metadata with the path-segment name rule after
 * the kind's own validation (`rest.BeforeCreate`); Events have no other name rule.
 */
function withPathSegmentName(object: KubeObject, causes: StatusCause[]): StatusCause[] {
  const name = object.metadata.name ?? '';
  if (name === '' && !object.metadata.generateName) return [...causes, fieldErrors.required('metadata.name', 'name or generateName is required')];
  return [...causes, ...nameIsPathSegment(name, false).map((msg) => fieldErrors.invalid('metadata.name', name, msg))];
}

/** `ValidateLeaseSpec` (pkg/apis/coordination/validation). */
function validateLeaseSpec(spec: Record<string, unknown>): StatusCause[] {
  const errs: StatusCause[] = [];
  const duration = spec['leaseDurationSeconds'];
  if (typeof duration === 'number' && duration <= 0) errs.push(fieldErrors.invalid('spec.leaseDurationSeconds', duration, 'must be greater than 0'));
  const transitions = spec['leaseTransitions'];
  if (typeof transitions === 'number' && transitions < 0) errs.push(fieldErrors.invalid('spec.leaseTransitions', transitions, 'must be greater than or equal to 0'));
  return errs;
}

/** A CRD must be named `<spec.names.plural>.<spec.group>`. */
function validateCrdName(crd: KubeObject): StatusCause[] {
  const spec = obj(crd['spec']) ?? {};
  const expected = `${str(obj(spec['names'])?.['plural'])}.${str(spec['group'])}`;
  const name = crd.metadata.name ?? '';
  return name === expected ? [] : [fieldErrors.invalid('metadata.name', name, 'must be spec.names.plural+"."+spec.group')];
}

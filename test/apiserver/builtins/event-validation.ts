import type { KubeObject, StatusCause } from '../../../src/kube/object.ts';
import { fieldErrors } from '../schema/causes.ts';
import { obj, str } from './json.ts';
import { validateObjectMeta } from './meta-validation.ts';
import { isDNS1123Subdomain, isQualifiedName, nameIsDNSSubdomain } from './name-rules.ts';

const reportingInstanceLengthLimit = 128;
const actionLengthLimit = 128;
const reasonLengthLimit = 128;
const noteLengthLimit = 1024;

/**
 * `ValidateEventCreate` (pkg/apis/core/validation/events.go) for core/v1 Events: only the legacy
 * rules — the involved object's namespace must match, and an Event with `eventTime` needs
 * reportingComponent, reportingInstance, action and reason — plus a DNS-subdomain namespace.
 */
export function validateCoreEvent(event: KubeObject): StatusCause[] {
  return legacyValidate(event, { involved: 'involvedObject', reportingController: 'reportingComponent', note: 'message' });
}

/**
 * `ValidateEventCreate` for events.k8s.io/v1: the legacy rules plus ObjectMeta, a required
 * `eventTime`, type Normal or Warning and no `deprecated*` fields.
 */
export function validateEventsV1Event(event: KubeObject): StatusCause[] {
  const errs = legacyValidate(event, { involved: 'regarding', reportingController: 'reportingController', note: 'note' });
  errs.push(...validateObjectMeta(event.metadata, nameIsDNSSubdomain));
  if (!event['eventTime']) errs.push(fieldErrors.required('eventTime'));
  const type = str(event['type']);
  if (type !== 'Normal' && type !== 'Warning') errs.push(fieldErrors.invalid('type', '', `has invalid value: ${type}`));
  if (event['deprecatedFirstTimestamp']) errs.push(fieldErrors.invalid('deprecatedFirstTimestamp', '', 'needs to be unset'));
  if (event['deprecatedLastTimestamp']) errs.push(fieldErrors.invalid('deprecatedLastTimestamp', '', 'needs to be unset'));
  if (typeof event['deprecatedCount'] === 'number' && event['deprecatedCount'] !== 0) errs.push(fieldErrors.invalid('deprecatedCount', '', 'needs to be unset'));
  const source = obj(event['deprecatedSource']);
  if (str(source?.['component']) !== '' || str(source?.['host']) !== '') errs.push(fieldErrors.invalid('deprecatedSource', '', 'needs to be unset'));
  return errs;
}

interface FieldNames {
  readonly involved: string;
  readonly reportingController: string;
  readonly note: string;
}

function legacyValidate(event: KubeObject, names: FieldNames): StatusCause[] {
  const errs: StatusCause[] = [];
  const namespace = event.metadata.namespace ?? '';
  const involvedNamespace = str(obj(event[names.involved])?.['namespace']);
  const mismatch = () => fieldErrors.invalid(`${names.involved}.namespace`, involvedNamespace, 'does not match event.namespace');
  if (!event['eventTime']) {
    if (involvedNamespace === '' ? namespace !== '' && namespace !== 'default' : namespace !== involvedNamespace) errs.push(mismatch());
  } else {
    if (involvedNamespace === '' && namespace !== 'default' && namespace !== 'kube-system') errs.push(mismatch());
    const controller = str(event['reportingController'] ?? event['reportingComponent']);
    if (controller === '') errs.push(fieldErrors.required(names.reportingController));
    for (const msg of isQualifiedName(controller)) errs.push(fieldErrors.invalid(names.reportingController, controller, msg));
    limit(event, 'reportingInstance', 'reportingInstance', reportingInstanceLengthLimit, errs);
    limit(event, 'action', 'action', actionLengthLimit, errs);
    limit(event, 'reason', 'reason', reasonLengthLimit, errs);
    const note = str(event[names.note]);
    if (note.length > noteLengthLimit) errs.push(fieldErrors.invalid(names.note, '', `can have at most ${noteLengthLimit} characters`));
  }
  for (const msg of isDNS1123Subdomain(namespace)) errs.push(fieldErrors.invalid('namespace', namespace, msg));
  return errs;
}

/** Required and at most `max` characters (kube reports the length error with an empty value). */
function limit(event: KubeObject, key: string, path: string, max: number, errs: StatusCause[]): void {
  const value = str(event[key]);
  if (value === '') errs.push(fieldErrors.required(path));
  if (value.length > max) errs.push(fieldErrors.invalid(path, '', `can have at most ${max} characters`));
}

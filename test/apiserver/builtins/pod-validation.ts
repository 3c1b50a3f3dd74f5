import type { StatusCause } from '../../../src/kube/object.ts';
import { fieldErrors } from '../schema/causes.ts';
import { obj, objs, str } from './json.ts';
import { validateAnnotations, validateLabels } from './meta-validation.ts';
import { isDNS1123Label } from './name-rules.ts';
import { validateResourceRequirements } from './resource-requirements.ts';

/**
 * The part of `ValidatePodTemplateSpec`/`ValidatePodSpec` (pkg/apis/core/validation) that matters for
 * CronJob and Job templates: template labels and annotations, volumes (names, duplicates), containers
 * (required and DNS-label names, duplicates, required image, ports, resource quantities, pull and
 * termination policies, volume mounts referring to volumes), restartPolicy and dnsPolicy — in kube's order.
 */
export function validatePodTemplateSpec(template: unknown, path: string): StatusCause[] {
  const t = obj(template) ?? {};
  const meta = obj(t['metadata']) ?? {};
  const errs: StatusCause[] = [];
  errs.push(...validateLabels(obj(meta['labels']) as Record<string, string> | undefined, `${path}.labels`));
  errs.push(...validateAnnotations(obj(meta['annotations']) as Record<string, string> | undefined, `${path}.annotations`));
  errs.push(...validatePodSpec(obj(t['spec']) ?? {}, `${path}.spec`));
  return errs;
}

function validatePodSpec(spec: Record<string, unknown>, path: string): StatusCause[] {
  const errs: StatusCause[] = [];
  const volumeNames = new Set<string>();
  objs(spec['volumes']).forEach((volume, i) => {
    const name = str(volume['name']);
    const at = `${path}.volumes[${i}]`;
    if (name === '') errs.push(fieldErrors.required(`${at}.name`));
    else for (const msg of isDNS1123Label(name)) errs.push(fieldErrors.invalid(`${at}.name`, name, msg));
    if (name !== '' && volumeNames.has(name)) errs.push(fieldErrors.duplicate(`${at}.name`, name));
    volumeNames.add(name);
  });
  const containers = objs(spec['containers']);
  if (containers.length === 0) errs.push(fieldErrors.required(`${path}.containers`));
  const containerNames = new Set<string>();
  containers.forEach((c, i) => errs.push(...validateContainer(c, `${path}.containers[${i}]`, containerNames, volumeNames)));
  objs(spec['initContainers']).forEach((c, i) => errs.push(...validateContainer(c, `${path}.initContainers[${i}]`, containerNames, volumeNames)));
  errs.push(...oneOf(spec['restartPolicy'], `${path}.restartPolicy`, ['Always', 'OnFailure', 'Never']));
  errs.push(...oneOf(spec['dnsPolicy'], `${path}.dnsPolicy`, ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None']));
  const grace = spec['terminationGracePeriodSeconds'];
  if (typeof grace === 'number' && grace < 0) errs.push(fieldErrors.invalid(`${path}.terminationGracePeriodSeconds`, grace, 'must be greater than or equal to 0'));
  return errs;
}

function validateContainer(c: Record<string, unknown>, path: string, names: Set<string>, volumes: Set<string>): StatusCause[] {
  const errs: StatusCause[] = [];
  const name = str(c['name']);
  if (name === '') errs.push(fieldErrors.required(`${path}.name`));
  else for (const msg of isDNS1123Label(name)) errs.push(fieldErrors.invalid(`${path}.name`, name, msg));
  if (name !== '' && names.has(name)) errs.push(fieldErrors.duplicate(`${path}.name`, name));
  names.add(name);
  if (str(c['image']).trim() === '') errs.push(fieldErrors.required(`${path}.image`));
  objs(c['ports']).forEach((port, i) => {
    const at = `${path}.ports[${i}]`;
    const containerPort = port['containerPort'];
    if (typeof containerPort !== 'number' || containerPort === 0) errs.push(fieldErrors.required(`${at}.containerPort`));
    else if (containerPort < 1 || containerPort > 65535) errs.push(fieldErrors.invalid(`${at}.containerPort`, containerPort, 'must be between 1 and 65535, inclusive'));
    errs.push(...oneOf(port['protocol'], `${at}.protocol`, ['SCTP', 'TCP', 'UDP']));
  });
  errs.push(...validateResourceRequirements(c['resources'], `${path}.resources`));
  objs(c['volumeMounts']).forEach((mount, i) => {
    const at = `${path}.volumeMounts[${i}]`;
    const mountName = str(mount['name']);
    if (mountName === '') errs.push(fieldErrors.required(`${at}.name`));
    else if (!volumes.has(mountName)) errs.push({ reason: 'FieldValueNotFound', message: `Not found: ${JSON.stringify(mountName)}`, field: `${at}.name` });
    if (str(mount['mountPath']) === '') errs.push(fieldErrors.required(`${at}.mountPath`));
  });
  errs.push(...oneOf(c['terminationMessagePolicy'], `${path}.terminationMessagePolicy`, ['File', 'FallbackToLogsOnError']));
  errs.push(...oneOf(c['imagePullPolicy'], `${path}.imagePullPolicy`, ['Always', 'IfNotPresent', 'Never']));
  return errs;
}

/** Required when empty (defaulting normally fills it), NotSupported when not one of `allowed`. */
function oneOf(value: unknown, path: string, allowed: readonly string[]): StatusCause[] {
  const s = str(value);
  if (s === '') return [fieldErrors.required(path)];
  return allowed.includes(s) ? [] : [fieldErrors.notSupported(path, s, allowed)];
}

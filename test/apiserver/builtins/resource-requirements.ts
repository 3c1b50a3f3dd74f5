import { compareQuantities, isQuantity, parseQuantity, type Quantity } from '../../../src/api/quantity.ts';
import type { StatusCause } from '../../../src/kube/object.ts';
import { fieldErrors } from '../schema/causes.ts';
import { obj, objs } from './json.ts';

/**
 * Container `resources` as kube-apiserver treats them. Decoding: every quantity string goes through
 * `resource.ParseQuantity` while the body is unmarshalled, so a bad one fails the request with a 400
 * before any validation. Validation (`ValidateResourceRequirements`): quantities non-negative
 * (`limits[memory]: Invalid value: "-1Gi": must be greater than or equal to 0`), and each request at
 * most its limit, reported on `requests` as a whole. Values are printed as sent, not canonicalised.
 */

/** The pod specs of a built-in object that has a pod template (CronJob, Job). */
function podSpecs(group: string, resource: string, object: Record<string, unknown>): Record<string, unknown>[] {
  const spec = obj(object['spec']);
  const template = (() => {
    if (group !== 'batch') return undefined;
    if (resource === 'cronjobs') return obj(obj(obj(spec?.['jobTemplate'])?.['spec'])?.['template']);
    if (resource === 'jobs') return obj(spec?.['template']);
    return undefined;
  })();
  const podSpec = obj(template?.['spec']);
  return podSpec ? [podSpec] : [];
}

/** The first quantity of a container's requests or limits that does not parse, as kube's decode error. */
export function quantityDecodeError(group: string, resource: string, object: Record<string, unknown>): string | undefined {
  for (const podSpec of podSpecs(group, resource, object)) {
    for (const container of [...objs(podSpec['initContainers']), ...objs(podSpec['containers'])]) {
      const resources = obj(container['resources']);
      for (const list of ['limits', 'requests']) {
        for (const value of Object.values(obj(resources?.[list]) ?? {})) {
          if (typeof value !== 'string') continue;
          const parsed = parseQuantity(value);
          if (!isQuantity(parsed)) return parsed.error;
        }
      }
    }
  }
  return undefined;
}

/** `ValidateResourceRequirements` for one container's `resources` at `path`. */
export function validateResourceRequirements(resources: unknown, path: string): StatusCause[] {
  const errs: StatusCause[] = [];
  const read = (list: 'limits' | 'requests'): Map<string, { text: string; value: Quantity }> => {
    const out = new Map<string, { text: string; value: Quantity }>();
    for (const [name, raw] of Object.entries(obj(obj(resources)?.[list]) ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
      const text = typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? raw : undefined;
      const value = text === undefined ? undefined : parseQuantity(text);
      if (text === undefined || value === undefined || !isQuantity(value)) continue;
      if (value.mantissa < 0n) errs.push(fieldErrors.invalid(`${path}.${list}[${name}]`, text, 'must be greater than or equal to 0'));
      out.set(name, { text, value });
    }
    return out;
  };
  const limits = read('limits');
  for (const [name, request] of read('requests')) {
    const limit = limits.get(name);
    if (limit && compareQuantities(request.value, limit.value) > 0) {
      errs.push(fieldErrors.invalid(`${path}.requests`, request.text, `must be less than or equal to ${name} limit of ${limit.text}`));
    }
  }
  return errs;
}

import { compareQuantities, isQuantity, parseQuantity, type Quantity } from './quantity.ts';

/**
 * The container resource checks kube-apiserver runs on the CronJob's pod template
 * (pkg/apis/core/validation ValidateResourceRequirements): every quantity parses
 * (`resource.ParseQuantity`) and is non-negative (ValidateNonnegativeQuantity), and a request is at
 * most its limit. Our schema allows only cpu, memory and ephemeral-storage, which are all overcommittable,
 * so "less than or equal" is the whole rule.
 */

/** One problem: the dotted field and what is wrong with it (without the field prefix). */
export interface ResourceProblem {
  /** e.g. `spec.resources.requests.memory`. */
  readonly field: string;
  /** e.g. `must be less than or equal to memory limit of 512Mi`. */
  readonly problem: string;
}

type Lists = { readonly requests?: unknown; readonly limits?: unknown };

/** What kube-apiserver says of a request or limit: the parser's error, or that it is negative; undefined when fine. */
export function quantityProblem(text: string): string | undefined {
  const value = parseQuantity(text);
  if (!isQuantity(value)) return `invalid quantity ${JSON.stringify(text)}: ${value.error}`;
  return value.mantissa < 0n ? `must be greater than or equal to 0, got ${JSON.stringify(text)}` : undefined;
}

/** Problems with `{ requests, limits }` at `path` (each a map of resource name to quantity string). */
export function resourcesErrors(resources: unknown, path: string): ResourceProblem[] {
  if (resources === null || typeof resources !== 'object') return [];
  const problems: ResourceProblem[] = [];
  const parsed = (list: 'requests' | 'limits'): Map<string, { text: string; value: Quantity }> => {
    const out = new Map<string, { text: string; value: Quantity }>();
    const entries = (resources as Lists)[list];
    if (entries === null || typeof entries !== 'object') return out;
    for (const [name, text] of Object.entries(entries)) {
      if (typeof text !== 'string') continue;
      const problem = quantityProblem(text);
      const value = parseQuantity(text);
      if (problem !== undefined) problems.push({ field: `${path}.${list}.${name}`, problem });
      else if (isQuantity(value)) out.set(name, { text, value });
    }
    return out;
  };
  const limits = parsed('limits');
  const requests = parsed('requests');
  for (const [name, request] of requests) {
    const limit = limits.get(name);
    if (limit !== undefined && compareQuantities(request.value, limit.value) > 0) {
      problems.push({ field: `${path}.requests.${name}`, problem: `must be less than or equal to ${name} limit of ${limit.text}, got ${request.text}` });
    }
  }
  return problems;
}

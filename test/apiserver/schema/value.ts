/** How Kubernetes names JSON values in messages (`field.Error` rendering and kube-openapi type names). */

/** A JSON object (not an array, not null). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The OpenAPI type name kube-openapi reports for a decoded JSON value: whole numbers are `integer`
 * (the JSON decoder yields int64 for them), others `number`.
 */
export function jsonTypeOf(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'array';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'boolean';
    case 'number':
      return Number.isInteger(value) ? 'integer' : 'number';
    case 'bigint':
      return 'integer';
    default:
      return 'object';
  }
}

/**
 * A bad value as `field.Error` prints it after `Invalid value: `: strings quoted, numbers and
 * booleans bare, null as `"null"`, anything else as JSON.
 */
export function renderValue(value: unknown): string {
  if (value === null || value === undefined) return '"null"';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value);
}

/** Deep equality of two decoded JSON values (for `enum` and `uniqueItems`). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && jsonEqual(a[k], b[k]));
  }
  return false;
}

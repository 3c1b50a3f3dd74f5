/** Narrowing helpers for the untyped parts of built-in objects. */

/** A JSON object, or undefined. */
export function obj(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** A JSON object at `parent[key]`, created empty when absent. */
export function ensureObj(parent: Record<string, unknown>, key: string): Record<string, unknown> {
  const existing = obj(parent[key]);
  if (existing) return existing;
  const created: Record<string, unknown> = {};
  parent[key] = created;
  return created;
}

/** The objects of an array field (non-objects skipped). */
export function objs(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.flatMap((v) => (obj(v) ? [v as Record<string, unknown>] : [])) : [];
}

/** Sets `parent[key] = value` when the field is absent (undefined, null or ''), like Go's zero-value checks. */
export function setDefault(parent: Record<string, unknown>, key: string, value: unknown): void {
  const current = parent[key];
  if (current === undefined || current === null || current === '') parent[key] = value;
}

/** A string field, or '' (Go's zero value). */
export function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

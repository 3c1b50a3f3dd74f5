/**
 * The BackupSchedule schema as the validators see it, stricter than the CRD in the ways the API server
 * is stricter than the schema says (see closeObjects). Shared by the compiled validator
 * (schema-validator.ts) and the editor/CI JSON Schema (json-schema.ts); it loads nothing, so the synth,
 * which writes the JSON Schema, does not load ajv.
 */

/** The integer formats as bounds: on an integer, `int32` is -2^31…2^31-1; `int64` what JavaScript holds exactly. */
const INTEGER_FORMAT_BOUNDS: Readonly<Record<string, readonly [number, number]>> = {
  int32: [-(2 ** 31), 2 ** 31 - 1],
  int64: [-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};

/**
 * The schema as the validator sees it: unknown properties are errors (the API server would silently
 * prune them, which hides typos such as `keeplast`), except at the root where metadata lives; lists of
 * type set must not hold duplicates; `format: int32|int64` become the bounds they mean (a tighter
 * bound of the node stays), so the compiled code needs no custom format functions.
 */
export function closeObjects(node: unknown, isRoot: boolean): unknown {
  if (Array.isArray(node)) return node.map((n) => closeObjects(n, false));
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(node)) {
    out[key] = key === 'default' || key === 'enum' ? child : closeObjects(child, false);
  }
  if (out['properties'] !== undefined && !isRoot) out['additionalProperties'] = false;
  // The API server rejects duplicates in a list of type set; structural schemas forbid uniqueItems.
  if (out['x-kubernetes-list-type'] === 'set') out['uniqueItems'] = true;
  const bounds = INTEGER_FORMAT_BOUNDS[String(out['format'])];
  if (bounds !== undefined) {
    delete out['format'];
    out['minimum'] = Math.max(bounds[0], typeof out['minimum'] === 'number' ? out['minimum'] : -Infinity);
    out['maximum'] = Math.min(bounds[1], typeof out['maximum'] === 'number' ? out['maximum'] : Infinity);
  }
  return out;
}

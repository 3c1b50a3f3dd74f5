/** Custom resource schema handling for the test API server: validation, defaulting, pruning, CRD checks. */
export type { JSONSchemaProps, ValidationRule } from './types.ts';
export { validateCustomResource, type ValidateCustomResourceOptions } from './validate.ts';
export { defaultCustomResource } from './defaults.ts';
export { pruneCustomResource } from './prune.ts';
export { validateStructuralSchema } from './structural.ts';

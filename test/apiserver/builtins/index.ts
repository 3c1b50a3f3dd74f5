/** Built-in kinds of the test API server: kube's server-side defaults and validation. */
export { applyBuiltinDefaults } from './defaults.ts';
export { validateBuiltin } from './validate.ts';
export { validateObjectName } from './name-validation.ts';
export { defaultPodTemplateSpec, imageTag } from './pod-defaults.ts';
export { cronParseError } from './cron-schedule.ts';
export { prepareJobForCreate } from './job-selector.ts';
export { allocateServiceForCreate, keepServiceAllocation } from './service-allocation.ts';
export { pruneBuiltinUnknownFields } from './unknown-fields.ts';
export { quantityDecodeError } from './resource-requirements.ts';

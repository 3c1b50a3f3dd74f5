import type { ObjectMeta, StatusCause } from '../../../src/kube/object.ts';
import { fieldErrors } from '../schema/causes.ts';
import { isQualifiedName, isValidLabelValue, type NameValidator } from './name-rules.ts';

/** Total annotation size limit (`TotalAnnotationSizeLimitB`). */
const totalAnnotationSizeLimit = 256 * 1024;

/**
 * `ValidateObjectMeta` (apimachinery/pkg/api/validation/objectmeta.go) in kube's order: name or
 * generateName, generation, labels, annotations, ownerReferences, finalizers. `path` is the meta's
 * field path (`metadata`, or `spec.template.metadata` for templates where only labels and
 * annotations are checked, see {@link validateLabels}).
 */
export function validateObjectMeta(meta: ObjectMeta, nameFn: NameValidator, path = 'metadata'): StatusCause[] {
  const errs: StatusCause[] = [];
  const name = meta.name ?? '';
  const generateName = meta.generateName ?? '';
  if (generateName !== '') {
    for (const msg of nameFn(generateName, true)) errs.push(fieldErrors.invalid(`${path}.generateName`, generateName, msg));
  }
  if (name === '' && generateName === '') {
    errs.push(fieldErrors.required(`${path}.name`, 'name or generateName is required'));
  } else if (name !== '') {
    for (const msg of nameFn(name, false)) errs.push(fieldErrors.invalid(`${path}.name`, name, msg));
  }
  if (typeof meta.generation === 'number' && meta.generation < 0) {
    errs.push(fieldErrors.invalid(`${path}.generation`, meta.generation, 'must be greater than or equal to 0'));
  }
  errs.push(...validateLabels(meta.labels, `${path}.labels`));
  errs.push(...validateAnnotations(meta.annotations, `${path}.annotations`));
  errs.push(...validateOwnerReferences(meta.ownerReferences, `${path}.ownerReferences`));
  for (const finalizer of meta.finalizers ?? []) {
    for (const msg of isQualifiedName(finalizer)) errs.push(fieldErrors.invalid(`${path}.finalizers`, finalizer, msg));
  }
  return errs;
}

/** `ValidateLabels`: keys are qualified names, values valid label values; errors at the map's path. */
export function validateLabels(labels: Record<string, string> | undefined, path: string): StatusCause[] {
  const errs: StatusCause[] = [];
  for (const key of Object.keys(labels ?? {}).sort()) {
    for (const msg of isQualifiedName(key)) errs.push(fieldErrors.invalid(path, key, msg));
    const value = labels?.[key];
    if (typeof value !== 'string') continue;
    for (const msg of isValidLabelValue(value)) errs.push(fieldErrors.invalid(path, value, msg));
  }
  return errs;
}

/** `ValidateAnnotations`: keys are (lower-cased) qualified names; 256 KiB in total. */
export function validateAnnotations(annotations: Record<string, string> | undefined, path: string): StatusCause[] {
  const errs: StatusCause[] = [];
  let total = 0;
  for (const key of Object.keys(annotations ?? {}).sort()) {
    for (const msg of isQualifiedName(key.toLowerCase())) errs.push(fieldErrors.invalid(path, key, msg));
    total += key.length + String(annotations?.[key] ?? '').length;
  }
  if (total > totalAnnotationSizeLimit) errs.push(fieldErrors.tooLong(path, totalAnnotationSizeLimit));
  return errs;
}

/**
 * `ValidateOwnerReferences`: apiVersion (with a version), kind, name and uid must be set; at most one
 * reference has `controller: true`. Kube reports these at `metadata.ownerReferences.<field>` (no index).
 */
export function validateOwnerReferences(refs: ObjectMeta['ownerReferences'], path: string): StatusCause[] {
  const errs: StatusCause[] = [];
  let firstController = '';
  for (const ref of refs ?? []) {
    const apiVersion = ref.apiVersion ?? '';
    const version = apiVersion.includes('/') ? apiVersion.slice(apiVersion.indexOf('/') + 1) : apiVersion;
    if (version === '') errs.push(fieldErrors.invalid(`${path}.apiVersion`, apiVersion, 'version must not be empty'));
    if (!ref.kind) errs.push(fieldErrors.invalid(`${path}.kind`, ref.kind ?? '', 'kind must not be empty'));
    if (!ref.name) errs.push(fieldErrors.invalid(`${path}.name`, ref.name ?? '', 'name must not be empty'));
    if (!ref.uid) errs.push(fieldErrors.invalid(`${path}.uid`, ref.uid ?? '', 'uid must not be empty'));
    if (ref.controller === true) {
      const current = `${ref.kind ?? ''}/${ref.name ?? ''}`;
      if (firstController !== '') {
        errs.push(fieldErrors.invalid(path, refs, `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`));
      } else {
        firstController = current;
      }
    }
  }
  return errs;
}

/**
 * What the CLI says of one object of the input, shared by `validate` and `preview` so both report the
 * same errors, in the same order, in the same words: which objects are BackupSchedules (and which are
 * one with a misspelt kind), the errors of each in file order, then where rules were left unchecked.
 */
import { API_GROUP, KIND, PLURAL, SERVED_GROUP_VERSIONS, SHORT_NAMES, SINGULAR } from '../api/constants.ts';
import { RESTORE_KIND } from '../api/restore-schema.ts';
import { uncheckedRules, validateAnyVersion, validateRestore, type FieldError } from '../api/validate.ts';
import type { Manifest } from './inputs.ts';

/** One error, where it is and what it says. */
export interface ManifestError {
  readonly file: string;
  /** 1-based line of the field (or of its nearest parent present in the document). */
  readonly line: number;
  /** `namespace/name` of the object, when it has a name. */
  readonly object?: string;
  /** Dotted path of the field, when the error is about one. */
  readonly field?: string;
  /** The problem, starting with the field's path. */
  readonly message: string;
}

/**
 * Whether an object is meant as a BackupSchedule: by `kind` alone, so a wrong `apiVersion`
 * (`kubelings.dev/v2`, a misspelt group) is reported rather than skipped.
 */
export function isBackupSchedule(object: unknown): boolean {
  return typeof object === 'object' && object !== null && (object as { kind?: unknown }).kind === KIND;
}

/**
 * Whether an object is meant as this operator's Restore: kind `Restore` in the `kubelings.dev` group.
 * Unlike BackupSchedule's, the kind alone does not say it: other operators have a Restore (Velero's).
 */
export function isRestore(object: unknown): boolean {
  if (typeof object !== 'object' || object === null) return false;
  const { apiVersion, kind } = object as { apiVersion?: unknown; kind?: unknown };
  return kind === RESTORE_KIND && typeof apiVersion === 'string' && apiVersion.split('/')[0] === API_GROUP;
}

/** The kinds of the `kubelings.dev` group. */
const OUR_KINDS: readonly string[] = [KIND, RESTORE_KIND];

/** The names a BackupSchedule goes by, lower-cased: what a kind written from `kubectl get bks` may look like. */
const OUR_NAMES = new Set([KIND.toLowerCase(), PLURAL, SINGULAR, ...SHORT_NAMES]);

/**
 * The error of an object that is meant as a BackupSchedule but whose `kind` is not spelt `BackupSchedule`:
 * any other kind in the `kubelings.dev` group (which serves no other kind: `BackupSchedul`), or one of
 * the resource's names in another case or form in any group (`backupschedule`, `BackupSchedules`). kubectl
 * would fail such an object with "no matches for kind"; skipped silently, a typo would leave a
 * schedule unchecked and CI green. Undefined for every other object.
 */
function misspeltKind(object: unknown): FieldError | undefined {
  if (typeof object !== 'object' || object === null) return undefined;
  const { apiVersion, kind } = object as { apiVersion?: unknown; kind?: unknown };
  if (typeof kind !== 'string' || OUR_KINDS.includes(kind) || (kind.endsWith('List') && Array.isArray((object as { items?: unknown }).items))) return undefined;
  const inOurGroup = typeof apiVersion === 'string' && apiVersion.split('/')[0] === API_GROUP;
  if (!inOurGroup && !OUR_NAMES.has(kind.toLowerCase())) return undefined;
  const where = inOurGroup ? `the ${API_GROUP} group has only ${OUR_KINDS.join(' and ')}` : 'kinds are case-sensitive and singular';
  const meant = inOurGroup && kind.toLowerCase().startsWith('rest') ? RESTORE_KIND : KIND;
  return { field: 'kind', message: `kind: ${JSON.stringify(kind)} is not a known kind (${where}); did you mean "${meant}"?` };
}

/**
 * The problems of a BackupSchedule manifest, checked in the version its `apiVersion` names
 * (validateAnyVersion: v1alpha1 and v1 documents may sit side by side in one file), plus a missing
 * `apiVersion`, which objects read back from the API server always have but a file may lack (kubectl
 * refuses it; the rest is then checked as v1alpha1). An `apiVersion` that is not served gets only the
 * error listing the served ones: the fields of a version whose schema is unknown cannot be judged, and
 * errors from a guessed one would mislead.
 */
function manifestProblems(object: unknown): FieldError[] {
  // A Restore's group is known (isRestore); its only version is v1, which validateRestore checks.
  if (isRestore(object)) return validateRestore(object);
  const apiVersion = (object as { apiVersion?: unknown }).apiVersion;
  const errors = validateAnyVersion(object);
  if (apiVersion === undefined) errors.unshift({ field: 'apiVersion', message: 'apiVersion: is required' });
  else if (!(SERVED_GROUP_VERSIONS as readonly unknown[]).includes(apiVersion)) return errors.filter((e) => e.field === 'apiVersion');
  return errors;
}

/** kube-apiserver's words when schema errors kept it from evaluating the CEL rules (apiextensions-apiserver). */
const RULES_NOT_CHECKED = 'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation';

/** `namespace/name` (or `name`) of a manifest, for messages. */
export function objectName(manifest: Manifest): string | undefined {
  const metadata = (manifest.object as { metadata?: { name?: unknown; namespace?: unknown } } | null)?.metadata;
  if (typeof metadata?.name !== 'string') return undefined;
  return typeof metadata.namespace === 'string' ? `${metadata.namespace}/${metadata.name}` : metadata.name;
}

/**
 * The errors of one manifest as the CLI reports them: none for an object that is not a BackupSchedule
 * or Restore; the misspelt-kind error; or the object's errors in file order, a BackupSchedule's followed
 * (when the schema failed under a node with cross-field rules) by one line saying which nodes' rules were
 * not checked, so "fix these and you are done" is never implied when more may follow.
 */
export function checkManifest(manifest: Manifest): ManifestError[] {
  const object = objectName(manifest);
  const at = (error: FieldError): ManifestError => ({ file: manifest.file, line: manifest.lineOf(error.field), ...(object === undefined ? {} : { object }), field: error.field, message: error.message });
  const kind = misspeltKind(manifest.object);
  if (kind !== undefined) return [at(kind)];
  if (!isBackupSchedule(manifest.object) && !isRestore(manifest.object)) return [];
  const problems = manifestProblems(manifest.object);
  if (problems.length === 0) return [];
  const errors = problems.map(at).sort((a, b) => a.line - b.line);
  if (isRestore(manifest.object)) return errors;
  const served = (SERVED_GROUP_VERSIONS as readonly unknown[]).includes((manifest.object as { apiVersion?: unknown }).apiVersion);
  const [first, ...others] = served ? uncheckedRules(manifest.object).sort((a, b) => a.length - b.length) : [];
  // One line, as kube-apiserver's one error, at the outermost node whose rules were skipped.
  if (first !== undefined) errors.push(at({ field: first, message: `${first}: ${RULES_NOT_CHECKED}${others.length === 0 ? '' : ` (also the rules of ${others.join(', ')})`}` }));
  return errors;
}

/** One error as a line of text: `file:line: namespace/name: field: message`. */
export function formatError(error: ManifestError): string {
  return `${error.file}:${error.line}: ${error.object === undefined ? '' : `${error.object}: `}${error.message}`;
}

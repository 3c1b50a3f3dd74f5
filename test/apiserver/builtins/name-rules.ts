/**
 * apimachinery `util/validation` name checks, returning kube's messages (without the field prefix).
 */

const dns1123LabelFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const dns1123SubdomainFmt = `${dns1123LabelFmt}(\\.${dns1123LabelFmt})*`;
const qualifiedNameFmt = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const labelValueFmt = `(${qualifiedNameFmt})?`;

const dns1123LabelRe = new RegExp(`^${dns1123LabelFmt}$`);
const dns1123SubdomainRe = new RegExp(`^${dns1123SubdomainFmt}$`);
const qualifiedNameRe = new RegExp(`^${qualifiedNameFmt}$`);
const labelValueRe = new RegExp(`^${labelValueFmt}$`);

/** `validation.RegexError`: the message, examples and the regexp kube validated with. */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  // Go builds "'a', " + " or 'b', " ..., hence the double space before "or".
  const list = examples.map((e, i) => `${i > 0 ? ' or ' : ''}'${e}', `).join('');
  return `${msg} (e.g. ${list}regex used for validation is '${fmt}')`;
}

/** `validation.MaxLenError`. */
export function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

/** `IsDNS1123Label`: at most 63 lowercase alphanumerics or '-'. */
export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push(maxLenError(63));
  if (!dns1123LabelRe.test(value)) {
    errs.push(regexError("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character", dns1123LabelFmt, 'my-name', '123-abc'));
  }
  return errs;
}

/** `IsDNS1123Subdomain`: at most 253 characters of dot-separated labels. */
export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 253) errs.push(maxLenError(253));
  if (!dns1123SubdomainRe.test(value)) {
    errs.push(regexError("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character", dns1123SubdomainFmt, 'example.com'));
  }
  return errs;
}

const qualifiedNameErrMsg = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** `IsQualifiedName`: label and annotation keys, finalizers (`[prefix/]name`). */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0] ?? '';
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    name = parts[1] ?? '';
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else errs.push(...isDNS1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [`a qualified name ${regexError(qualifiedNameErrMsg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push(`name part ${maxLenError(63)}`);
  if (!qualifiedNameRe.test(name)) errs.push(`name part ${regexError(qualifiedNameErrMsg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

/** `IsValidLabelValue`: empty or a qualified name part of at most 63 characters. */
export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push(maxLenError(63));
  if (!labelValueRe.test(value)) {
    errs.push(regexError("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", labelValueFmt, 'MyValue', 'my_value', '12345'));
  }
  return errs;
}

/** `path.IsValidPathSegmentName`: what RBAC object names must satisfy. */
export function isValidPathSegmentName(name: string): string[] {
  for (const illegal of ['.', '..']) if (name === illegal) return [`may not be '${illegal}'`];
  return ['/', '%'].filter((c) => name.includes(c)).map((c) => `may not contain '${c}'`);
}

/** A name check as `ValidateObjectMeta` calls it; `prefix` is true for generateName. */
export type NameValidator = (name: string, prefix: boolean) => string[];

/** kube's `maskTrailingDash`: a generateName may end in '-' because a suffix follows. */
function masked(name: string, prefix: boolean): string {
  return prefix && name.length > 1 && name.endsWith('-') ? `${name.slice(0, -1)}a` : name;
}

/** `NameIsDNSSubdomain`. */
export const nameIsDNSSubdomain: NameValidator = (name, prefix) => isDNS1123Subdomain(masked(name, prefix));
/** `NameIsDNSLabel`. */
export const nameIsDNSLabel: NameValidator = (name, prefix) => isDNS1123Label(masked(name, prefix));
/** `ValidatePathSegmentName`. */
export const nameIsPathSegment: NameValidator = (name, prefix) => (prefix ? isValidPathSegmentName(name).filter((m) => !m.startsWith('may not be')) : isValidPathSegmentName(name));

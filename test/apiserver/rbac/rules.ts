import type { AuthorizationAttributes, PolicyRule } from './types.ts';

/**
 * `rbac.RuleAllows` (plugin/pkg/auth/authorizer/rbac): whether one PolicyRule grants the request.
 * `resourceNames` only match requests that carry a name, so they never allow list, watch,
 * deletecollection or create (the name is unknown to the authorizer then).
 */
export function ruleAllows(attrs: AuthorizationAttributes, rule: PolicyRule): boolean {
  if (attrs.isResourceRequest) {
    const combined = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
    return (
      verbMatches(rule, attrs.verb) &&
      apiGroupMatches(rule, attrs.apiGroup) &&
      resourceMatches(rule, combined, attrs.subresource) &&
      resourceNameMatches(rule, attrs.name)
    );
  }
  return verbMatches(rule, attrs.verb) && nonResourceURLMatches(rule, attrs.path);
}

function verbMatches(rule: PolicyRule, verb: string): boolean {
  return (rule.verbs ?? []).some((v) => v === '*' || v === verb);
}

function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  return (rule.apiGroups ?? []).some((g) => g === '*' || g === group);
}

function resourceMatches(rule: PolicyRule, combined: string, subresource: string | undefined): boolean {
  return (rule.resources ?? []).some(
    (r) => r === '*' || r === combined || (subresource !== undefined && r === `*/${subresource}`),
  );
}

function resourceNameMatches(rule: PolicyRule, name: string | undefined): boolean {
  const names = rule.resourceNames ?? [];
  if (names.length === 0) return true;
  return name !== undefined && name !== '' && names.includes(name);
}

function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  return (rule.nonResourceURLs ?? []).some(
    (url) => url === '*' || url === path || (url.endsWith('*') && path.startsWith(url.slice(0, -1))),
  );
}

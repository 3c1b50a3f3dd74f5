/** RBAC authorization of the test API server (plugin/pkg/auth/authorizer/rbac semantics). */
export type { AuthorizationAttributes, PolicyRule, RbacObjects, RoleRef, Subject, UserInfo } from './types.ts';
export { authorize, rulesFor } from './authorize.ts';
export { ruleAllows } from './rules.ts';
export { forbiddenStatus } from './forbidden.ts';

/**
 * The CRD's CEL `x-kubernetes-validations` rules, re-implemented in TypeScript so the controller (and
 * tests) can reject a spec that slipped past admission (objects created before a rule existed, or a
 * cluster whose API server does not evaluate CEL). test/api/cel-rules.test.ts checks that every rule in
 * the schema has a twin here and that both agree, by evaluating the CEL text with a CEL interpreter.
 */

/** One cross-field rule: where it sits in the schema, its CEL text, and the same check in TypeScript. */
export interface CelRule {
  /** Property path of the schema node that carries the rule, e.g. `['spec', 'source']`. */
  readonly path: readonly string[];
  /** The CEL expression, exactly as in the schema. */
  readonly rule: string;
  /** The rule's message, exactly as in the schema. */
  readonly message: string;
  /** Relative path the API server reports the error at (`fieldPath`), e.g. `.endpoints`; none = the node. */
  readonly fieldPath?: string;
  /** The rule in TypeScript; `self` is the (schema-valid) value at `path`. */
  readonly check: (self: Record<string, unknown>) => boolean;
}

import { DEFAULT_DESTINATION_TYPE, DESTINATION_TYPES, RETENTION_RULES, SAME_CLAIM_RULE_V1, SOURCE_TYPES, unionMemberRule } from './schema-v1.ts';

type Obj = Record<string, unknown>;
const obj = (value: unknown): Obj | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Obj) : undefined;

/** Every CEL rule of the BackupSchedule schema. */
export const CEL_RULES: readonly CelRule[] = [
  {
    path: ['spec'],
    rule:
      '!has(self.source.persistentVolumeClaim) || ' +
      'self.source.persistentVolumeClaim.claimName != self.destination.persistentVolumeClaim.claimName',
    message: 'source.persistentVolumeClaim.claimName must differ from destination.persistentVolumeClaim.claimName',
    fieldPath: '.destination.persistentVolumeClaim.claimName',
    check: (self) => {
      const source = obj(obj(self['source'])?.['persistentVolumeClaim']);
      const destination = obj(obj(self['destination'])?.['persistentVolumeClaim']);
      return source === undefined || source['claimName'] !== destination?.['claimName'];
    },
  },
  {
    path: ['spec', 'source'],
    rule: '(has(self.etcd) ? 1 : 0) + (has(self.persistentVolumeClaim) ? 1 : 0) == 1',
    message: 'exactly one of etcd or persistentVolumeClaim must be set',
    check: (self) => Number(self['etcd'] !== undefined) + Number(self['persistentVolumeClaim'] !== undefined) === 1,
  },
  {
    path: ['spec', 'source', 'etcd'],
    rule: "!has(self.tlsSecretName) || self.endpoints.all(e, e.startsWith('https://'))",
    message: 'endpoints must use https:// when tlsSecretName is set',
    fieldPath: '.endpoints',
    check: (self) => {
      const endpoints = Array.isArray(self['endpoints']) ? (self['endpoints'] as unknown[]) : [];
      return self['tlsSecretName'] === undefined || endpoints.every((e) => String(e).startsWith('https://'));
    },
  },
  {
    path: ['spec', 'destination', 'persistentVolumeClaim', 'path'],
    rule: "!self.split('/').exists(s, s == '..')",
    message: 'path must not contain ".." segments',
    // A string node: `self` is wrapped by the caller as { value } (see validate.ts).
    check: (self) => !String(self['value']).split('/').includes('..'),
  },
];

const ruleAt = (path: readonly string[]): CelRule => {
  const found = CEL_RULES.find((r) => r.path.join('.') === path.join('.'));
  if (found === undefined) throw new Error(`no v1alpha1 CEL rule at ${path.join('.')}`);
  return found;
};

/**
 * The rules of a union whose `type` names the member that is set. `defaultType` is what the API server
 * fills in when type is absent (a structural default), so the check reads an undefaulted object the same.
 */
function unionRules(path: readonly string[], types: Readonly<Record<string, string>>, defaultType?: string): CelRule[] {
  return Object.entries(types).map(([member, type]) => ({
    path,
    ...unionMemberRule(member, type),
    check: (self) => ((self['type'] ?? defaultType) === type) === (self[member] !== undefined),
  }));
}

/** Every CEL rule of the v1 BackupSchedule schema (src/api/schema-v1.ts), in schema order. */
export const CEL_RULES_V1: readonly CelRule[] = [
  {
    path: ['spec'],
    ...SAME_CLAIM_RULE_V1,
    // An ObjectStore destination has no claim to collide with.
    check: (self) => {
      const source = obj(obj(self['source'])?.['persistentVolumeClaim']);
      const destination = obj(obj(self['destination'])?.['persistentVolumeClaim']);
      return source === undefined || destination === undefined || source['claimName'] !== destination['claimName'];
    },
  },
  ...unionRules(['spec', 'source'], SOURCE_TYPES),
  ruleAt(['spec', 'source', 'etcd']),
  ...unionRules(['spec', 'destination'], DESTINATION_TYPES, DEFAULT_DESTINATION_TYPE),
  ruleAt(['spec', 'destination', 'persistentVolumeClaim', 'path']),
  {
    path: ['spec', 'destination', 'objectStore'],
    rule: "!has(self.endpoint) || self.endpoint.startsWith('https://') || (has(self.allowHttp) && self.allowHttp)",
    message: 'endpoint must use https:// unless allowHttp is true',
    fieldPath: '.endpoint',
    check: (self) => self['endpoint'] === undefined || String(self['endpoint']).startsWith('https://') || self['allowHttp'] === true,
  },
  {
    path: ['spec', 'destination', 'objectStore', 'bucket'],
    rule: "!self.contains('..')",
    message: 'bucket must not contain two adjacent periods',
    check: (self) => !String(self['value']).includes('..'),
  },
  {
    path: ['spec', 'destination', 'objectStore', 'bucket'],
    rule: "!self.matches('^[0-9]+[.][0-9]+[.][0-9]+[.][0-9]+$')",
    message: 'bucket must not be formatted as an IP address',
    check: (self) => !/^[0-9]+[.][0-9]+[.][0-9]+[.][0-9]+$/.test(String(self['value'])),
  },
  {
    path: ['spec', 'destination', 'objectStore', 'prefix'],
    rule: "!self.split('/').exists(s, s == '.' || s == '..')",
    message: 'prefix must not contain "." or ".." segments',
    check: (self) => !String(self['value']).split('/').some((s) => s === '.' || s === '..'),
  },
  {
    path: ['spec', 'retention'],
    rule: RETENTION_RULES.map((rule) => `has(self.${rule})`).join(' || '),
    message: `at least one of ${RETENTION_RULES.join(', ')} must be set`,
    check: (self) => RETENTION_RULES.some((rule) => self[rule] !== undefined),
  },
];

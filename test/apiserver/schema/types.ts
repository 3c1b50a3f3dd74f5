/**
 * `apiextensions.k8s.io/v1` `JSONSchemaProps`: the OpenAPI v3 subset a CustomResourceDefinition's
 * `openAPIV3Schema` may use, with the Kubernetes `x-kubernetes-*` extensions.
 */

/** One `x-kubernetes-validations` entry: a CEL rule evaluated with `self` bound to the node. */
export interface ValidationRule {
  /** The CEL expression; must evaluate to a bool. */
  readonly rule: string;
  /** Message reported when the rule is false. @default `failed rule: <rule>` */
  readonly message?: string;
  /** CEL expression producing the message (evaluated; falls back to `message`). @default none */
  readonly messageExpression?: string;
  /** The cause reason: FieldValueInvalid, FieldValueForbidden, FieldValueRequired or FieldValueDuplicate. @default `FieldValueInvalid` */
  readonly reason?: string;
  /** A JSON path relative to the node (`.spec.x`) where the error is reported. @default the node's path */
  readonly fieldPath?: string;
  /** Kubernetes' own transition-rule flag (ratcheting); only informational here. @default false */
  readonly optionalOldSelf?: boolean;
}

/** The JSON shape of `JSONSchemaProps` (apiextensions v1). */
export interface JSONSchemaProps {
  type?: string;
  format?: string;
  title?: string;
  description?: string;
  properties?: Record<string, JSONSchemaProps>;
  required?: string[];
  items?: JSONSchemaProps;
  enum?: unknown[];
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  minProperties?: number;
  maxProperties?: number;
  nullable?: boolean;
  default?: unknown;
  example?: unknown;
  additionalProperties?: JSONSchemaProps | boolean;
  allOf?: JSONSchemaProps[];
  anyOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-validations'?: ValidationRule[];
}

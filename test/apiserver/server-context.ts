import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KubeObject } from '../../src/kube/object.ts';
import type { Clock } from '../../src/runtime/clock.ts';
import type { AuthenticatedUser, TokenAuthenticator } from './auth.ts';
import type { CustomResourceConverter } from './conversion/crd-converter.ts';
import type { DroppedField, FieldMutation } from './field-rewrites.ts';
import type { RegistryStore } from './registry-store.ts';
import type { ResourceRegistry } from './resource-registry.ts';
import { apiVersionOf, type ResourceType } from './resource-type.ts';
import type { RequestInfo } from './router/request-info.ts';
import type { Storage } from './storage.ts';

/** Everything the handlers share. */
export interface ServerContext {
  readonly registry: ResourceRegistry;
  readonly store: RegistryStore;
  readonly storage: Storage;
  readonly clock: Clock;
  readonly auth: TokenAuthenticator;
  /** Period of BOOKMARK events on watches that allow them. */
  readonly bookmarkIntervalMs: number;
  /** Run the OwnerReferencesPermissionEnforcement admission plugin. */
  readonly enforceOwnerReferencePermissions: boolean;
  /** Fields dropped on writes, as an older server does. */
  readonly droppedFields: readonly DroppedField[];
  /** Fields set on writes, as a mutating admission webhook does. */
  readonly fieldMutations: readonly FieldMutation[];
  /** The `/version` answer. */
  readonly versionInfo: Readonly<Record<string, string>>;
  /** Converts custom resources between the versions of their CRD (None or Webhook). */
  readonly converter: CustomResourceConverter;
}

/** One resource request being served. */
export interface ResourceRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly info: RequestInfo;
  readonly query: URLSearchParams;
  readonly user: AuthenticatedUser;
  readonly type: ResourceType;
  /** Namespace from the path (undefined for cluster-scoped or all-namespaces requests). */
  readonly namespace: string | undefined;
}

/**
 * The object as served at the requested version: built-ins share one storage for all versions (only
 * `apiVersion` differs); custom resources arrive here already converted (`conversion/`).
 */
export function present(type: ResourceType, obj: KubeObject): KubeObject {
  const apiVersion = apiVersionOf(type);
  return obj.apiVersion === apiVersion ? obj : { ...obj, apiVersion };
}

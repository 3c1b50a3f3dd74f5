import { ApiStatusError, statusErrors, type GroupResource } from '../../src/kube/api-status-error.ts';
import type { StatusBody } from '../../src/kube/object.ts';

/**
 * Status bodies kube-apiserver sends that `src/kube/api-status-error.ts` has no constructor for,
 * with their exact texts (apimachinery `errors.New*` and the endpoint handlers).
 */
export const serverErrors = {
  /** Unknown path or resource (`NewNotFound` without a name in the mux). */
  pathNotFound(): StatusBody {
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server could not find the requested resource', reason: 'NotFound', details: {}, code: 404 };
  },
  methodNotAllowed(): StatusBody {
    return { ...statusErrors.methodNotAllowed('the server does not allow this method on the requested resource'), details: {} };
  },
  notAcceptable(): StatusBody {
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server was unable to respond with a content type that the client supports', reason: 'NotAcceptable', details: {}, code: 406 };
  },
  unsupportedMediaType(contentType: string): StatusBody {
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml`, reason: 'UnsupportedMediaType', details: { causes: [{ reason: 'UnexpectedServerResponse', message: contentType }] }, code: 415 };
  },
  /** JSON patch that could not be applied (`NewGenericServerResponse(422, …)`). */
  patchRejected(): StatusBody {
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server rejected our request due to an error in our request', reason: 'Invalid', details: {}, code: 422 };
  },
  /**
   * A DELETE whose DeleteOptions preconditions (uid or resourceVersion) the object does not meet: kube's
   * `rest.BeforeDelete` fails early with a Conflict on the object's group and **kind** (`ConfigMap`,
   * `Widget.example.com`), not its resource.
   */
  deletePreconditionFailed(group: string, kind: string, name: string, what: 'UID' | 'ResourceVersion', expected: string, actual: string): StatusBody {
    const why = what === 'UID' ? 'The object might have been deleted and then recreated' : 'The object might have been modified';
    return statusErrors.conflict({ group, resource: kind }, name, `the ${what} in the precondition (${expected}) does not match the ${what} in record (${actual}). ${why}`);
  },
  /** A storage precondition (the uid of an update body) not met: `storage.Preconditions.Check`, on the resource. */
  preconditionFailed(gr: GroupResource, name: string, what: 'UID' | 'ResourceVersion', expected: string, actual: string): StatusBody {
    return statusErrors.conflict(gr, name, `Precondition failed: ${what} in precondition: ${expected}, ${what} in object meta: ${actual}`);
  },
  /**
   * A PUT or apply that would create the object, by a user without `create` (kube's `withAuthorization`:
   * `NewForbidden` with the authorizer's reason, empty when RBAC has no opinion).
   */
  createOnUpdateForbidden(gr: GroupResource, name: string): StatusBody {
    const qualified = gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `${qualified} "${name}" is forbidden: `, reason: 'Forbidden', details: { name, ...(gr.group ? { group: gr.group } : {}), kind: gr.resource }, code: 403 };
  },
  /** NamespaceLifecycle admission: no new objects in a terminating namespace. */
  namespaceTerminating(gr: GroupResource, name: string, namespace: string): StatusBody {
    const qualified = gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
    return {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
      message: `${qualified} "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`,
      reason: 'Forbidden',
      details: { name, ...(gr.group ? { group: gr.group } : {}), kind: gr.resource, causes: [{ reason: 'NamespaceTerminating', message: `namespace ${namespace} is being terminated`, field: 'metadata.namespace' }] },
      code: 403,
    };
  },
  /** A watch from a compacted resourceVersion (sent as an ERROR event on a 200 stream). */
  watchExpired(requested: number, oldest: number): StatusBody {
    return statusErrors.expired(`too old resource version: ${requested} (${oldest})`);
  },
  continueExpired(): StatusBody {
    return statusErrors.expired(
      'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
    );
  },
  /** Success body of an immediate DELETE. */
  deleted(gr: GroupResource, name: string, uid: string | undefined): StatusBody {
    return {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success',
      details: { name, ...(gr.group ? { group: gr.group } : {}), kind: gr.resource, ...(uid ? { uid } : {}) },
      // kube omits `code` on a successful delete (see k8s-reference/delete-configmap-response.json).
    } as unknown as StatusBody;
  },
} as const;

/** Throws the status as an {@link ApiStatusError}. */
export function fail(status: StatusBody): never {
  throw new ApiStatusError(status);
}

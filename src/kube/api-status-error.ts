import type { StatusBody, StatusCause } from './object.ts';

/**
 * The one error type for a failed Kubernetes API call, carrying the server's `metav1.Status`.
 *
 * Both sides use it: the REST client throws it, and the test API server builds every error answer
 * with the constructors below, so client and server agree on reasons, codes and message texts
 * (those texts are copied from a real kube-apiserver; see test/fixtures/k8s-reference).
 */
export class ApiStatusError extends Error {
  readonly status: StatusBody;

  constructor(status: StatusBody, options?: ErrorOptions) {
    super(status.message ?? status.reason ?? `HTTP ${status.code}`, options);
    this.name = 'ApiStatusError';
    this.status = status;
  }

  get code(): number {
    return this.status.code;
  }

  get reason(): string | undefined {
    return this.status.reason;
  }

  /** Seconds the server asked us to wait (429/503 `Retry-After`, or `details.retryAfterSeconds`). */
  get retryAfterSeconds(): number | undefined {
    return this.status.details?.retryAfterSeconds;
  }
}

/**
 * The wait in ms the API server asked for with the error `err` (a 429 or 503 `Retry-After`, or
 * `details.retryAfterSeconds`), also when `err` carries such an error as its `cause`; undefined when
 * it asked for none.
 */
export function retryAfterMs(err: unknown): number | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++) {
    const seconds = e instanceof ApiStatusError ? e.retryAfterSeconds : undefined;
    if (seconds !== undefined && Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  }
  return undefined;
}

/** A group-qualified resource as Kubernetes prints it in messages: `cronjobs.batch`, `configmaps`. */
export interface GroupResource {
  readonly group: string;
  readonly resource: string;
}

function qualified({ group, resource }: GroupResource): string {
  return group ? `${resource}.${group}` : resource;
}

function failure(code: number, reason: string, message: string, details?: StatusBody['details']): StatusBody {
  const body: StatusBody = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
  if (details) body.details = details;
  return body;
}

function resourceDetails(gr: GroupResource, name?: string): NonNullable<StatusBody['details']> {
  return { ...(name !== undefined ? { name } : {}), ...(gr.group ? { group: gr.group } : {}), kind: gr.resource };
}

/** Constructors for the Status bodies a kube-apiserver returns, with its exact message texts. */
export const statusErrors = {
  notFound(gr: GroupResource, name: string): StatusBody {
    return failure(404, 'NotFound', `${qualified(gr)} "${name}" not found`, resourceDetails(gr, name));
  },
  alreadyExists(gr: GroupResource, name: string): StatusBody {
    return failure(409, 'AlreadyExists', `${qualified(gr)} "${name}" already exists`, resourceDetails(gr, name));
  },
  conflict(gr: GroupResource, name: string, why = 'the object has been modified; please apply your changes to the latest version and try again'): StatusBody {
    return failure(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(gr)} "${name}": ${why}`, resourceDetails(gr, name));
  },
  /** 422 for a kind (`CronJob`, with its group) whose fields failed validation; every cause is listed. */
  invalid(kind: { group: string; kind: string }, name: string, causes: readonly StatusCause[]): StatusBody {
    const qualifiedKind = kind.group ? `${kind.kind}.${kind.group}` : kind.kind;
    const lines = causes.map((c) => (c.field ? `${c.field}: ${c.message ?? ''}` : (c.message ?? '')));
    const joined = lines.length === 1 ? lines[0] : `[${lines.join(', ')}]`;
    return failure(422, 'Invalid', `${qualifiedKind} "${name}" is invalid: ${joined}`, {
      // StatusDetails.name is omitempty: an options kind or a nameless object has none.
      ...(name ? { name } : {}),
      ...(kind.group ? { group: kind.group } : {}),
      kind: kind.kind,
      causes: [...causes],
    });
  },
  forbidden(user: string, verb: string, gr: GroupResource, namespace: string | undefined, name?: string, subresource?: string): StatusBody {
    const resource = subresource ? `${gr.resource}/${subresource}` : gr.resource;
    const where = namespace ? ` in the namespace "${namespace}"` : ' at the cluster scope';
    const named = name ? ` ${qualified(gr)} "${name}"` : ` ${qualified(gr)}`;
    const message = `${named.trim()} is forbidden: User "${user}" cannot ${verb} resource "${resource}" in API group "${gr.group}"${where}`;
    return failure(403, 'Forbidden', message, resourceDetails(gr, name));
  },
  unauthorized(): StatusBody {
    return failure(401, 'Unauthorized', 'Unauthorized');
  },
  /** A WATCH or LIST from a resourceVersion the server no longer retains. */
  expired(message = 'The resourceVersion for the provided list is too old.'): StatusBody {
    return failure(410, 'Expired', message);
  },
  badRequest(message: string): StatusBody {
    return failure(400, 'BadRequest', message);
  },
  methodNotAllowed(message: string): StatusBody {
    return failure(405, 'MethodNotAllowed', message);
  },
  tooManyRequests(retryAfterSeconds: number, message = 'Too many requests, please try again later.'): StatusBody {
    return failure(429, 'TooManyRequests', message, { retryAfterSeconds });
  },
  internalError(message: string): StatusBody {
    return failure(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
  },
  serviceUnavailable(message = 'the server is currently unable to handle the request'): StatusBody {
    return failure(503, 'ServiceUnavailable', message);
  },
  timeout(message = 'the server was unable to return a response in the time allotted, but may still be processing the request'): StatusBody {
    return failure(504, 'Timeout', message);
  },
} as const;

function reasonIs(err: unknown, reason: string, code: number): boolean {
  return err instanceof ApiStatusError && (err.reason === reason || (err.reason === undefined && err.code === code));
}

export const isNotFound = (err: unknown): boolean => reasonIs(err, 'NotFound', 404);
export const isAlreadyExists = (err: unknown): boolean => reasonIs(err, 'AlreadyExists', 409) && (err as ApiStatusError).reason === 'AlreadyExists';
export const isConflict = (err: unknown): boolean => reasonIs(err, 'Conflict', 409) && (err as ApiStatusError).reason !== 'AlreadyExists';
export const isInvalid = (err: unknown): boolean => reasonIs(err, 'Invalid', 422);
export const isForbidden = (err: unknown): boolean => reasonIs(err, 'Forbidden', 403);
export const isTooManyRequests = (err: unknown): boolean => reasonIs(err, 'TooManyRequests', 429);
/** 410 Gone: the watch (or list) resourceVersion was compacted away; the only cure is a fresh LIST. */
export const isExpired = (err: unknown): boolean =>
  err instanceof ApiStatusError && (err.code === 410 || err.reason === 'Expired' || err.reason === 'Gone');

/** How a failed write should be handled: sent again soon, or reported and retried only slowly. */
export type WriteErrorDisposition = 'retry' | 'terminal';

/**
 * Whether sending the same write again can succeed without anything else changing. The one place
 * that decides it, so every caller agrees:
 *
 * - `retry`: the server or the path to it is having a moment, or our view is stale — 401 (our bound
 *   token expired and the rotated one is read at once: it says nothing about the object), 408, 409
 *   (Conflict and AlreadyExists: the cache is behind), 429 and every 5xx (overload, etcd timeouts,
 *   webhooks timing out), a 404 on anything but a create (the object went away; the cache will say so
 *   and the next reconcile recreates it), and every error that is not an API Status at all (connection
 *   refused or reset, TLS, client timeouts: no answer is no verdict).
 * - `terminal`: the server judged the request and said no — 400, 403 (RBAC, admission, a
 *   terminating namespace), 404 on a create (the namespace or the kind is gone), 422 (validation,
 *   including admission webhooks that deny) and every other 4xx. The same bytes get the same answer,
 *   so a tight retry loop only adds load; callers report the message and retry with a long backoff,
 *   because the cause is usually fixed outside the object (RBAC granted, a webhook policy changed).
 */
export function writeErrorDisposition(err: unknown, verb: 'create' | 'update' | 'patch'): WriteErrorDisposition {
  if (!(err instanceof ApiStatusError)) return 'retry';
  const code = err.code;
  if (code === 401 || code === 408 || code === 409 || code === 429 || code >= 500) return 'retry';
  if (code === 404 && verb !== 'create') return 'retry';
  return code >= 400 ? 'terminal' : 'retry';
}

/**
 * An in-memory Secret "server" (resourceVersion checked on update, AlreadyExists on create) and
 * per-replica clients that fail on any call a test did not allow, recording it as unexpected.
 */
import { ApiStatusError, statusErrors } from '../../src/kube/api-status-error.ts';
import type { SecretClient, SecretObject } from '../../src/runtime/certificate-manager.ts';

const secrets = { group: '', resource: 'secrets' };

/** One Secret, shared by every replica's client. */
export class FakeSecretServer {
  secret: SecretObject | undefined;
  #rv = 0;

  read(name: string): SecretObject {
    if (!this.secret) throw new ApiStatusError(statusErrors.notFound(secrets, name));
    return structuredClone(this.secret);
  }

  create(secret: SecretObject): SecretObject {
    if (this.secret) throw new ApiStatusError(statusErrors.alreadyExists(secrets, secret.metadata.name ?? ''));
    this.secret = { ...structuredClone(secret), metadata: { ...secret.metadata, resourceVersion: String(++this.#rv) } };
    return structuredClone(this.secret);
  }

  update(secret: SecretObject): SecretObject {
    if (!this.secret) throw new ApiStatusError(statusErrors.notFound(secrets, secret.metadata.name ?? ''));
    if (secret.metadata.resourceVersion !== this.secret.metadata.resourceVersion) throw new ApiStatusError(statusErrors.conflict(secrets, secret.metadata.name ?? ''));
    this.secret = { ...structuredClone(secret), metadata: { ...secret.metadata, resourceVersion: String(++this.#rv) } };
    return structuredClone(this.secret);
  }
}

type Verb = 'get' | 'create' | 'update';

/** One replica's client: every call logged; a verb not in `allow` is rejected and recorded. */
export class FakeSecretClient implements SecretClient {
  readonly calls: Verb[] = [];
  readonly unexpected: string[] = [];
  /** Runs before the server handles a call (to stage a race). */
  before: ((verb: Verb) => void) | undefined;

  constructor(
    readonly server: FakeSecretServer,
    readonly allow: Set<Verb>,
  ) {}

  #call<T>(verb: Verb, fn: () => T): Promise<T> {
    this.calls.push(verb);
    if (!this.allow.has(verb)) {
      this.unexpected.push(verb);
      return Promise.reject(new Error(`unexpected ${verb}`));
    }
    try {
      this.before?.(verb);
      return Promise.resolve(fn());
    } catch (err) {
      return Promise.reject(err);
    }
  }

  get(ref: { namespace: string; name: string }): Promise<SecretObject> {
    return this.#call('get', () => this.server.read(ref.name));
  }

  create(secret: SecretObject): Promise<SecretObject> {
    return this.#call('create', () => this.server.create(secret));
  }

  update(secret: SecretObject): Promise<SecretObject> {
    return this.#call('update', () => this.server.update(secret));
  }
}

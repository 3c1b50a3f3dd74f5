/**
 * Whether the API server serves a resource, found out from discovery and waited for: what a controller
 * of a custom resource whose CRD may be installed after the operator (or not at all) waits on before
 * its informers start. Without it the informer's LIST fails with 404 until the controller's cache-sync
 * timeout ends the whole process, every other controller with it (issue 41, LOW 9); and a reflector
 * failing for minutes also makes `/healthz` fail, so kubelet would restart the Pod in a loop.
 *
 * Discovery (`/apis/<group>/<version>`, or `/api/v1`) is readable by every authenticated user
 * (`system:discovery`). It is read again after a jittered backoff (0.8 s doubling up to 30 s, the
 * reflector's) until the resource is listed; so a CRD applied later is noticed within 30 s.
 */
import type { KubeClient } from '../kube/kube-client.ts';
import { isNotFound } from '../kube/api-status-error.ts';
import type { ResourceType } from '../kube/resource-client.ts';
import type { Clock } from './clock.ts';
import type { Logger } from './logger.ts';
import { WatchBackoff, type WatchBackoffOptions } from './watch-backoff.ts';

/** Options for {@link ServedResource}. */
export interface ServedResourceOptions {
  /** Reads discovery. */
  readonly client: Pick<KubeClient, 'request'>;
  readonly resource: ResourceType;
  /** What to do about it, said once in the error log while the resource is not served (e.g. which CRD to apply). */
  readonly hint: string;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Timeout of each discovery request. @default 10_000 */
  readonly requestTimeoutMs?: number;
  /** @default {@link WatchBackoff} defaults: 0.8 s doubling up to 30 s, jittered */
  readonly backoff?: WatchBackoffOptions;
}

/** What discovery said last (a union, not flags). */
type Discovery = { readonly state: 'unknown' } | { readonly state: 'missing'; readonly why: string } | { readonly state: 'served' };

interface ApiResourceList {
  readonly resources?: readonly { readonly name?: unknown }[];
}

/** Waits until the API server serves a resource; see the module doc. */
export class ServedResource {
  readonly #o: ServedResourceOptions;
  readonly #backoff: WatchBackoff;
  #discovery: Discovery = { state: 'unknown' };
  #waiting: Promise<void> | undefined;

  constructor(options: ServedResourceOptions) {
    this.#o = options;
    this.#backoff = new WatchBackoff(options.clock, { resetAfterMs: Number.MAX_SAFE_INTEGER, ...options.backoff });
  }

  /** `plural.group/version`, as logs and messages name it. */
  get name(): string {
    const { plural, group, version } = this.#o.resource;
    return `${plural}${group ? `.${group}` : ''}/${version}`;
  }

  /**
   * Resolves once discovery lists the resource, reading it until then: one loop however many callers,
   * which the first caller's `signal` stops. Rejects when the caller's `signal` aborts (or the loop's).
   */
  served(signal: AbortSignal): Promise<void> {
    const waiting = (this.#waiting ??= this.#wait(signal));
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const onAbort = (): void => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      const done = (): void => signal.removeEventListener('abort', onAbort);
      waiting.then(() => (done(), resolve()), (err: unknown) => (done(), reject(err)));
    });
  }

  /** Why the resource is not known to be served (undefined once it is): for `/readyz`. */
  problem(): string | undefined {
    const d = this.#discovery;
    if (d.state === 'served') return undefined;
    return d.state === 'unknown' ? `not yet known whether the API server serves ${this.name}` : d.why;
  }

  async #wait(signal: AbortSignal): Promise<void> {
    const { clock, logger, hint } = this.#o;
    for (let told = false; ; ) {
      const why = await this.#check();
      if (why === undefined) {
        this.#discovery = { state: 'served' };
        if (told) logger.info({ resource: this.name }, `the API server serves ${this.name} now`);
        return;
      }
      this.#discovery = { state: 'missing', why };
      const delayMs = this.#backoff.next();
      if (!told) logger.error({ resource: this.name, retryMs: Math.round(delayMs) }, `${why}: ${hint}`);
      else logger.debug({ resource: this.name, retryMs: Math.round(delayMs) }, why);
      told = true;
      await clock.sleep(delayMs, signal);
    }
  }

  /** Undefined when discovery lists the resource, else why not. */
  async #check(): Promise<string | undefined> {
    const { group, version, plural } = this.#o.resource;
    const path = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
    try {
      const list = await this.#o.client.request<ApiResourceList>('GET', path, { timeoutMs: this.#o.requestTimeoutMs ?? 10_000 });
      return list?.resources?.some((r) => r.name === plural) ? undefined : `the API server does not serve ${this.name} (discovery of ${path} does not list ${plural})`;
    } catch (err) {
      if (isNotFound(err)) return `the API server does not serve ${this.name} (no ${path} in discovery)`;
      return `cannot read discovery ${path}: ${(err as Error).message}`;
    }
  }
}

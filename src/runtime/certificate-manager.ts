/**
 * Keeps a CA and a serving certificate in one Secret with no other infrastructure (no cert-manager), and
 * hands the current certificate to a server. Every replica reads the Secret (a GET each `resyncMs`) and
 * serves what it holds. The leader writes it: creates it when missing, renews by the rules of
 * {@link planCertificates}, and publishes the CA bundle through `onCaBundle` (a CRD's `caBundle`).
 * A follower writes only when the Secret holds nothing servable (no CA or serving certificate, or an
 * expired one), and then publishes the bundle too: the leader may be a replica of a release without the
 * webhook (a rolling upgrade), and a Deployment whose new Pods wait for it to become ready never
 * replaces it. Every write is conditional (create, or update at the read resourceVersion), so racing
 * replicas cannot both win: AlreadyExists → read theirs; a Conflict → read again and plan on it.
 */
import { isAlreadyExists, isConflict, isNotFound } from '../kube/api-status-error.ts';
import type { KubeObject } from '../kube/object.ts';
import { realClock, type Clock } from './clock.ts';
import {
  CERTIFICATE_SECRET_KEYS,
  planCertificates,
  readCertificateState,
  renewCertificates,
  type CertificateState,
  type RotationPolicy,
} from './certificate-plan.ts';
import { WEBHOOK_CERTIFICATE_CHECK } from '../pure/names.ts';
import type { HealthCheck } from './health.ts';
import type { Logger } from './logger.ts';
import { PeriodicSync } from './periodic-sync.ts';
import { WriteGateClosedError } from './write-gate.ts';

/** A core/v1 Secret, as far as this module reads it. */
export interface SecretObject extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

/** The calls made on the one Secret (a `ResourceClient` of secrets fits). */
export interface SecretClient {
  get(ref: { namespace: string; name: string }): Promise<SecretObject>;
  create(secret: SecretObject): Promise<SecretObject>;
  update(secret: SecretObject): Promise<SecretObject>;
}

/** What a server needs to serve: PEM certificate and key, and the CAs clients trust. */
export interface ServingCredentials {
  readonly certPem: string;
  readonly keyPem: string;
  readonly caBundlePem: string;
}

/** Options of {@link CertificateManager}. */
export interface CertificateManagerOptions {
  readonly secrets: SecretClient;
  readonly namespace: string;
  readonly secretName: string;
  /** Names, lifetimes and rotation points of the certificates. */
  readonly policy: RotationPolicy;
  /** Whether this replica leads (it renews; a follower only fills a Secret with nothing servable). */
  isLeader(): boolean;
  /** Called on every replica whenever the Secret's serving certificate changes (and first when one is read). */
  onCredentials(credentials: ServingCredentials): void;
  /**
   * After every sync with a certificate to serve: publish the CA bundle (PEM), `exact` on the leader,
   * `include` on a follower (add what is missing, never remove: its read of the Secret may be older).
   * A failure is logged and retried at the next sync. @default none
   */
  readonly onCaBundle?: (caBundlePem: string, mode: 'exact' | 'include') => Promise<void>;
  /** How often the Secret is read again. @default 60_000 */
  readonly resyncMs?: number;
  /** Wait after a failed sync, and between reads while there is no certificate to serve yet. @default 5_000 */
  readonly retryMs?: number;
  /** @default realClock */
  readonly clock?: Clock;
  readonly logger: Pick<Logger, 'info' | 'warn' | 'debug'>;
}

/** See the module doc. */
export class CertificateManager extends PeriodicSync {
  readonly #o: CertificateManagerOptions;
  readonly #clock: Clock;
  #served: string | undefined;
  #waitingLogged = false;
  #credentials: ServingCredentials | undefined;

  constructor(options: CertificateManagerOptions) {
    if (options.policy.dnsNames.length === 0) throw new TypeError('CertificateManager: policy.dnsNames must not be empty');
    const clock = options.clock ?? realClock;
    super(clock);
    this.#o = options;
    this.#clock = clock;
  }

  /** The credentials served now, once the Secret held a valid serving certificate. */
  get credentials(): ServingCredentials | undefined {
    return this.#credentials;
  }

  /** One sync (`sync()` runs one now, e.g. on becoming leader); a failure is logged and retried after `retryMs`. */
  protected override async runOnce(): Promise<number> {
    try {
      return await this.#syncOnce();
    } catch (err) {
      const level = err instanceof WriteGateClosedError ? 'debug' : 'warn';
      this.#o.logger[level]({ err: String(err), secret: this.#ref() }, 'certificate sync failed; retrying');
      return this.#o.retryMs ?? 5_000;
    }
  }

  #ref(): string {
    return `${this.#o.namespace}/${this.#o.secretName}`;
  }

  async #read(): Promise<SecretObject | undefined> {
    try {
      return await this.#o.secrets.get({ namespace: this.#o.namespace, name: this.#o.secretName });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** One sync; returns the delay until the next one. */
  async #syncOnce(): Promise<number> {
    const resyncMs = this.#o.resyncMs ?? 60_000;
    let secret = await this.#read();
    let state = readCertificateState(secret?.data);
    const leader = this.#o.isLeader();
    const bootstrap = !leader && !this.#servable(state);
    if (leader || bootstrap) {
      // Two attempts: a lost race (AlreadyExists, Conflict) means another replica wrote; plan on theirs.
      for (let attempt = 0; attempt < 2; attempt++) {
        const plan = planCertificates(state, this.#clock.now(), this.#o.policy);
        // A follower stops as soon as there is something to serve (a racing replica's write): renewing is the leader's.
        if (plan.reasons.length === 0 || (!leader && this.#servable(state))) break;
        const data = await renewCertificates(state, plan, this.#clock.now(), this.#o.policy);
        try {
          secret = await this.#write(secret, data);
          state = readCertificateState(secret.data);
          this.#o.logger.info({ secret: this.#ref(), reasons: plan.reasons, ...(bootstrap ? { by: 'follower: nothing servable' } : {}) }, 'webhook certificates written');
          break;
        } catch (err) {
          if (!isAlreadyExists(err) && !isConflict(err)) throw err;
          this.#o.logger.info({ secret: this.#ref() }, 'another replica wrote the certificate Secret first; reading theirs');
          secret = await this.#read();
          state = readCertificateState(secret?.data);
        }
      }
    }
    this.#serve(state);
    // A replica with nothing to serve is not ready: it looks again soon rather than at the next resync.
    if (!this.#credentials) return Math.min(resyncMs, this.#o.retryMs ?? 5_000);
    if (state.ca && this.#o.onCaBundle) await this.#o.onCaBundle(state.bundle.map((c) => c.pem).join(''), leader ? 'exact' : 'include');
    if (!leader) return resyncMs;
    const plan = planCertificates(state, this.#clock.now(), this.#o.policy);
    return Math.min(resyncMs, plan.nextCheckAt - this.#clock.now());
  }

  /** Whether `state` holds a CA and a serving certificate that can be served now. */
  #servable(state: CertificateState): boolean {
    const now = this.#clock.now();
    return state.ca !== undefined && state.ca.info.notAfter > now && state.serving !== undefined && state.serving.info.notAfter > now;
  }

  async #write(secret: SecretObject | undefined, data: Record<string, string>): Promise<SecretObject> {
    if (!secret) {
      return this.#o.secrets.create({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: this.#o.secretName, namespace: this.#o.namespace },
        type: 'Opaque',
        data,
      });
    }
    // Keys this module does not know are kept; the ones it owns are replaced (next-ca.* may go away).
    const kept = Object.fromEntries(Object.entries(secret.data ?? {}).filter(([k]) => !(Object.values(CERTIFICATE_SECRET_KEYS) as string[]).includes(k)));
    return this.#o.secrets.update({ ...secret, data: { ...kept, ...data } });
  }

  #serve(state: CertificateState): void {
    const serving = state.serving;
    if (!serving || serving.info.notAfter <= this.#clock.now()) {
      if (this.#served === undefined && !this.#waitingLogged) this.#o.logger.info({ secret: this.#ref(), problem: state.servingProblem ?? state.problem ?? 'expired' }, 'no serving certificate in the Secret yet');
      this.#waitingLogged = true;
      return;
    }
    if (serving.info.fingerprint256 === this.#served) return;
    this.#served = serving.info.fingerprint256;
    this.#credentials = { certPem: serving.certPem, keyPem: serving.keyPem, caBundlePem: state.bundle.map((c) => c.pem).join('') };
    this.#o.logger.info({ secret: this.#ref(), notAfter: new Date(serving.info.notAfter).toISOString(), fingerprint: serving.info.fingerprint256 }, 'serving certificate loaded');
    this.#o.onCredentials(this.#credentials);
  }
}

/**
 * Readiness: a replica is ready to take webhook calls once it serves a valid certificate, from the Secret
 * (a {@link CertificateManager}) or from files (a `CertificateDirectory`, which says why it has none).
 */
export function certificateLoadedCheck(source: { readonly credentials: ServingCredentials | undefined; readonly problem?: string | undefined }): HealthCheck {
  return {
    name: WEBHOOK_CERTIFICATE_CHECK,
    check: () => (source.credentials ? { ok: true } : { ok: false, reason: source.problem ?? 'no serving certificate loaded from the Secret yet' }),
  };
}

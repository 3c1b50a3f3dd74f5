/**
 * The conversion webhook as one replica runs it: the HTTPS server on its own port (every replica, not
 * only the leader: kube-apiserver calls any endpoint of the Service), and its certificate, loaded again
 * without a restart when rotated, from one of two sources: the one Secret kept by a
 * {@link CertificateManager} (with, on the leader, the CA bundle injected into the CRD), or files in a
 * directory that someone else keeps, a mounted Secret written by cert-manager (a
 * {@link CertificateDirectory}; cainjector publishes the CA, and the controller touches no Secret nor CRD).
 */
import { CRD_NAME } from '../api/index.ts';
import type { Clock } from '../runtime/clock.ts';
import { CertificateDirectory } from '../runtime/certificate-directory.ts';
import { CertificateManager, type SecretClient, type ServingCredentials } from '../runtime/certificate-manager.ts';
import type { RotationPolicy } from '../runtime/certificate-plan.ts';
import type { BindAddress, RunningServer } from '../runtime/http-server.ts';
import { startHttpsServer } from '../runtime/https-server.ts';
import type { Logger } from '../runtime/logger.ts';
import { webhookDnsNames } from '../pure/names.ts';
import { caBundleInjector, type CrdClient } from './ca-bundle-injector.ts';
import { CONVERSION_WEBHOOK_PATH, conversionWebhookHandler, WEBHOOK_SERVER_LIMITS } from './conversion-webhook.ts';

/** The webhook Service's DNS names (shared with the cert-manager Certificate of src/manifests). */
export { webhookDnsNames } from '../pure/names.ts';

/** Options of {@link startConversionWebhook} whatever keeps the certificate. */
interface WebhookServerOptions {
  readonly address: BindAddress;
  /** @default DEFAULT_MAX_REVIEW_BYTES */
  readonly maxBodyBytes?: number;
  /** @default realClock */
  readonly clock?: Clock;
  readonly logger: Logger;
}

/** The certificate kept by the controller in one Secret (`--conversion-webhook-secret-name`). */
export interface SecretCertificateOptions extends WebhookServerOptions {
  /** Namespace of the Service and the Secret (the operator's). */
  readonly namespace: string;
  readonly serviceName: string;
  readonly secretName: string;
  /** Secret reads (every replica) and writes (leader; the client passes the write gate). */
  readonly secrets: SecretClient;
  /** CRD reads and the caBundle patch (leader). */
  readonly crds: CrdClient;
  /** Whether this replica leads (the write gate is open). */
  isLeader(): boolean;
  /** Lifetimes and rotation points beyond the names. @default rotationDefaults */
  readonly rotation?: Omit<RotationPolicy, 'commonName' | 'dnsNames'>;
  /** @default 60_000 */
  readonly resyncMs?: number;
  /** @default CRD_NAME */
  readonly crdName?: string;
}

/** The certificate read from files kept by someone else (`--conversion-webhook-cert-dir`). */
export interface DirectoryCertificateOptions extends WebhookServerOptions {
  /** Directory of `tls.crt`, `tls.key` (and `ca.crt`): the mounted Secret cert-manager writes. */
  readonly certDir: string;
  /** How often the files are read again. @default 5_000 */
  readonly pollMs?: number;
}

/** Options of {@link startConversionWebhook}: `certDir` chooses the files, otherwise the Secret. */
export type ConversionWebhookServerOptions = SecretCertificateOptions | DirectoryCertificateOptions;

/** Where the served certificate comes from: a {@link CertificateManager} or a {@link CertificateDirectory}. */
export interface WebhookCertificateSource {
  /** The credentials served now, while valid. */
  readonly credentials: ServingCredentials | undefined;
  /** Why none are served, when the source can tell. */
  readonly problem?: string | undefined;
  /** Looks again now (the Secret source also writes, on the leader). */
  sync(): Promise<void>;
}

/** A running webhook. */
export interface RunningConversionWebhook extends RunningServer {
  readonly certificates: WebhookCertificateSource;
  close(): Promise<void>;
}

/** Binds the port, then starts the certificate source (the first certificate arrives asynchronously). */
export async function startConversionWebhook(options: ConversionWebhookServerOptions): Promise<RunningConversionWebhook> {
  const { logger } = options;
  const server = await startHttpsServer({
    address: options.address,
    limits: WEBHOOK_SERVER_LIMITS,
    routes: {
      [CONVERSION_WEBHOOK_PATH]: conversionWebhookHandler({
        ...(options.maxBodyBytes !== undefined ? { maxBodyBytes: options.maxBodyBytes } : {}),
        onReview: ({ status, objects, failure }) => {
          if (status !== 200 || failure !== undefined) logger.warn({ status, objects, failure }, 'conversion review refused');
          else logger.debug({ objects }, 'conversion review answered');
        },
      }),
    },
  });
  const onCredentials = (credentials: ServingCredentials): void => server.setCredentials(credentials);
  const clock = options.clock ? { clock: options.clock } : {};
  const certificates =
    'certDir' in options
      ? new CertificateDirectory({ dir: options.certDir, onCredentials, ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}), ...clock, logger })
      : new CertificateManager({
          secrets: options.secrets,
          namespace: options.namespace,
          secretName: options.secretName,
          policy: { ...options.rotation, commonName: options.serviceName, dnsNames: webhookDnsNames(options.serviceName, options.namespace) },
          isLeader: () => options.isLeader(),
          onCredentials,
          onCaBundle: caBundleInjector({ crds: options.crds, crdName: options.crdName ?? CRD_NAME, logger }),
          ...(options.resyncMs !== undefined ? { resyncMs: options.resyncMs } : {}),
          ...clock,
          logger,
        });
  certificates.start();
  const source = 'certDir' in options ? { certDir: options.certDir } : { secret: `${options.namespace}/${options.secretName}` };
  logger.info({ url: `${server.url}${CONVERSION_WEBHOOK_PATH}`, ...source }, 'conversion webhook listening');
  return {
    url: server.url,
    address: server.address,
    certificates,
    async close() {
      await certificates.stop();
      await server.close();
    },
  };
}

/**
 * The conversion webhook as one replica runs it: the HTTPS server on its own port (every replica, not
 * only the leader: kube-apiserver calls any endpoint of the Service), its certificate from the one
 * Secret kept by a {@link CertificateManager} (loaded again without a restart when rotated), and, on the
 * leader, the CA bundle injected into the CRD.
 */
import { CRD_NAME } from '../api/index.ts';
import type { Clock } from '../runtime/clock.ts';
import { CertificateManager, type SecretClient } from '../runtime/certificate-manager.ts';
import type { RotationPolicy } from '../runtime/certificate-plan.ts';
import type { BindAddress, RunningServer } from '../runtime/http-server.ts';
import { startHttpsServer } from '../runtime/https-server.ts';
import type { Logger } from '../runtime/logger.ts';
import { webhookDnsNames } from '../pure/names.ts';
import { caBundleInjector, type CrdClient } from './ca-bundle-injector.ts';
import { CONVERSION_WEBHOOK_PATH, conversionWebhookHandler } from './conversion-webhook.ts';

/** The webhook Service's DNS names (shared with the cert-manager Certificate of src/manifests). */
export { webhookDnsNames } from '../pure/names.ts';

/** Options of {@link startConversionWebhook}. */
export interface ConversionWebhookServerOptions {
  readonly address: BindAddress;
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
  /** @default DEFAULT_MAX_REVIEW_BYTES */
  readonly maxBodyBytes?: number;
  /** @default CRD_NAME */
  readonly crdName?: string;
  /** @default realClock */
  readonly clock?: Clock;
  readonly logger: Logger;
}

/** A running webhook. */
export interface RunningConversionWebhook extends RunningServer {
  readonly certificates: CertificateManager;
  close(): Promise<void>;
}

/** Binds the port, then starts the certificate manager (the first certificate arrives asynchronously). */
export async function startConversionWebhook(options: ConversionWebhookServerOptions): Promise<RunningConversionWebhook> {
  const { logger } = options;
  const server = await startHttpsServer({
    address: options.address,
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
  const certificates = new CertificateManager({
    secrets: options.secrets,
    namespace: options.namespace,
    secretName: options.secretName,
    policy: { ...options.rotation, commonName: options.serviceName, dnsNames: webhookDnsNames(options.serviceName, options.namespace) },
    isLeader: () => options.isLeader(),
    onCredentials: (credentials) => server.setCredentials(credentials),
    onCaBundle: caBundleInjector({ crds: options.crds, crdName: options.crdName ?? CRD_NAME, logger }),
    ...(options.resyncMs !== undefined ? { resyncMs: options.resyncMs } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    logger,
  });
  certificates.start();
  logger.info({ url: `${server.url}${CONVERSION_WEBHOOK_PATH}`, secret: `${options.namespace}/${options.secretName}` }, 'conversion webhook listening');
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

/**
 * Publishes the webhook's CA bundle where kube-apiserver reads it: the CRD's
 * `spec.conversion.webhook.clientConfig.caBundle` (base64 PEM). Only when the CRD has a webhook
 * conversion configured: a CRD without one (strategy None, as the CRD of a release before v1) is left
 * alone, and that is logged once (again only after it changed). The patch is a JSON merge patch of that
 * one field, sent only when it differs, so GitOps tools that own the rest of the CRD are not fought.
 */
import type { KubeObject } from '../kube/object.ts';
import type { Logger } from '../runtime/logger.ts';

/** The calls made on the one CRD (a `ResourceClient` of customresourcedefinitions fits). */
export interface CrdClient {
  get(ref: { name: string }): Promise<KubeObject>;
  patch(ref: { name: string }, patch: unknown): Promise<KubeObject>;
}

/** Options of {@link caBundleInjector}. */
export interface CaBundleInjectorOptions {
  readonly crds: CrdClient;
  /** The CRD's name, e.g. `backupschedules.kubelings.dev`. */
  readonly crdName: string;
  readonly logger: Pick<Logger, 'info'>;
}

interface WebhookConversion {
  readonly strategy?: string;
  readonly webhook?: { readonly clientConfig?: { readonly caBundle?: string } };
}

/** Returns the `onCaBundle` callback of a CertificateManager: patches the CRD's caBundle when needed. */
export function caBundleInjector(options: CaBundleInjectorOptions): (caBundlePem: string) => Promise<void> {
  let loggedNoWebhook = false;
  return async (caBundlePem) => {
    const crd = await options.crds.get({ name: options.crdName });
    const conversion = ((crd['spec'] ?? {}) as { conversion?: WebhookConversion }).conversion;
    if (conversion?.strategy !== 'Webhook' || !conversion.webhook?.clientConfig) {
      if (!loggedNoWebhook) options.logger.info({ crd: options.crdName, strategy: conversion?.strategy ?? 'None' }, 'the CRD has no webhook conversion; its caBundle is not injected');
      loggedNoWebhook = true;
      return;
    }
    loggedNoWebhook = false;
    const caBundle = Buffer.from(caBundlePem, 'utf8').toString('base64');
    if (conversion.webhook.clientConfig.caBundle === caBundle) return;
    await options.crds.patch({ name: options.crdName }, { spec: { conversion: { webhook: { clientConfig: { caBundle } } } } });
    options.logger.info({ crd: options.crdName }, 'CA bundle injected into the CRD conversion webhook');
  };
}

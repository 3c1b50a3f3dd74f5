/**
 * Publishes the webhook's CA bundle where kube-apiserver reads it: the CRD's
 * `spec.conversion.webhook.clientConfig.caBundle` (base64 PEM). Only when the CRD has a webhook
 * conversion configured: a CRD without one (strategy None, as the CRD of a release before v1) is left
 * alone, and that is logged once (again only after it changed).
 *
 * Two modes, as {@link CertificateManager} calls it on every sync:
 * - `exact` (the leader): the caBundle becomes the Secret's bundle;
 * - `include` (a follower): only CAs of its bundle the caBundle lacks are added, and only while they
 *   are valid; nothing is removed. A follower may hold an older read of the Secret than the leader
 *   wrote, so it must never take a CA out; but after it filled an empty Secret (a rolling upgrade, an
 *   old leader) the CA it serves with must get in, and a failed attempt is retried at its next sync.
 * Either way the patch is a JSON merge patch of that one field carrying the read `resourceVersion`,
 * sent only when the value differs: two replicas acting on different reads cannot overwrite each
 * other (409; the next sync reads again), and GitOps tools that own the rest of the CRD are not fought.
 */
import type { KubeObject } from '../kube/object.ts';
import type { Logger } from '../runtime/logger.ts';
import { readCertificate, splitPemBundle } from '../runtime/tls-certificates.ts';

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
  /** Now, in ms (a Clock's `now`). @default Date.now */
  readonly now?: () => number;
}

/** How the bundle is published: replace the caBundle (`exact`), or add what it lacks (`include`). */
export type CaBundleMode = 'exact' | 'include';

interface WebhookConversion {
  readonly strategy?: string;
  readonly webhook?: { readonly clientConfig?: { readonly caBundle?: string } };
}

const fingerprint = (pem: string): string => readCertificate(pem).fingerprint256;

/** The caBundle (PEM) `mode` asks for, given the CRD's current one. */
function wantedBundle(current: string, ours: string, mode: CaBundleMode, now: number): string {
  if (mode === 'exact') return ours;
  const have = new Set(splitPemBundle(current).map(fingerprint));
  const missing = splitPemBundle(ours).filter((pem) => !have.has(fingerprint(pem)) && readCertificate(pem).notAfter > now);
  return missing.length === 0 ? current : `${current}${current === '' || current.endsWith('\n') ? '' : '\n'}${missing.join('')}`;
}

/** Returns the `onCaBundle` callback of a CertificateManager: patches the CRD's caBundle when needed. */
export function caBundleInjector(options: CaBundleInjectorOptions): (caBundlePem: string, mode: CaBundleMode) => Promise<void> {
  let loggedNoWebhook = false;
  const now = options.now ?? Date.now;
  return async (caBundlePem, mode) => {
    const crd = await options.crds.get({ name: options.crdName });
    const conversion = ((crd['spec'] ?? {}) as { conversion?: WebhookConversion }).conversion;
    if (conversion?.strategy !== 'Webhook' || !conversion.webhook?.clientConfig) {
      if (!loggedNoWebhook) options.logger.info({ crd: options.crdName, strategy: conversion?.strategy ?? 'None' }, 'the CRD has no webhook conversion; its caBundle is not injected');
      loggedNoWebhook = true;
      return;
    }
    loggedNoWebhook = false;
    const current = Buffer.from(conversion.webhook.clientConfig.caBundle ?? '', 'base64').toString('utf8');
    const wanted = wantedBundle(current, caBundlePem, mode, now());
    if (wanted === current) return;
    const caBundle = Buffer.from(wanted, 'utf8').toString('base64');
    await options.crds.patch({ name: options.crdName }, { metadata: { resourceVersion: crd.metadata.resourceVersion }, spec: { conversion: { webhook: { clientConfig: { caBundle } } } } });
    options.logger.info({ crd: options.crdName, mode }, mode === 'exact' ? 'CA bundle injected into the CRD conversion webhook' : 'CA bundle of this replica added to the CRD conversion webhook');
  };
}

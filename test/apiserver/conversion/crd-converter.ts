/**
 * Conversion of custom resources between the versions of their CRD, as apiextensions-apiserver's
 * `crConverter` does: `None` rewrites `apiVersion` only, `Webhook` POSTs a ConversionReview and judges
 * the answer; either way the result is pruned and defaulted with the target version's schema (kube's
 * schema-coercing converter and storage decoder). Failures are kube's: a 500 Status without a reason
 * whose message is `conversion webhook for <group>/<version>, Kind=<Kind> failed: …`.
 */
import { randomUUID } from 'node:crypto';
import { ApiStatusError } from '../../../src/kube/api-status-error.ts';
import type { KubeObject, StatusBody } from '../../../src/kube/object.ts';
import { cloneJson } from '../json-equal.ts';
import { apiVersionOf, type ResourceType } from '../resource-type.ts';
import { defaultCustomResource, pruneCustomResource, type JSONSchemaProps } from '../schema/index.ts';
import type { Storage } from '../storage.ts';
import { acceptConverted, buildReview, convertedObjectsOf } from './conversion-review.ts';
import { postReview, resolveTarget, WebhookAgents, type ServiceResolver, type WebhookClientConfig } from './webhook-client.ts';

const CRD_GR = 'apiextensions.k8s.io/customresourcedefinitions';

interface CrdConversionSpec {
  readonly group?: string;
  readonly versions?: readonly { readonly name?: string; readonly storage?: boolean; readonly schema?: { readonly openAPIV3Schema?: JSONSchemaProps } }[];
  readonly conversion?: { readonly strategy?: string; readonly webhook?: { readonly clientConfig?: WebhookClientConfig; readonly conversionReviewVersions?: readonly string[] } };
}

/** The 500 kube answers when conversion fails (`ErrorToAPIStatus` of a plain error: no reason, no details). */
export function conversionFailure(message: string): StatusBody {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code: 500 } as StatusBody;
}

/** Converts custom resources between served versions (see the file comment). */
export class CustomResourceConverter {
  readonly #storage: Storage;
  readonly #resolve: ServiceResolver;
  readonly #agents = new WebhookAgents();

  constructor(storage: Storage, resolve: ServiceResolver) {
    this.#storage = storage;
    this.#resolve = resolve;
  }

  #spec(type: ResourceType): CrdConversionSpec {
    const crd = this.#storage.get(CRD_GR, '', type.custom?.crdName ?? '');
    return ((crd?.['spec'] as CrdConversionSpec | undefined) ?? {});
  }

  /** Closes the connections to webhooks (server stop). */
  close(): void {
    this.#agents.destroy();
  }

  /** `group/version` of the CRD's storage version (the type's own when it is not a custom resource). */
  storageApiVersion(type: ResourceType): string {
    if (!type.custom) return apiVersionOf(type);
    const spec = this.#spec(type);
    const storage = spec.versions?.find((v) => v.storage)?.name ?? type.version;
    return apiVersionOf({ group: type.group, version: storage });
  }

  /** True when serving `obj` as `desired` takes a conversion (a custom resource at another version). */
  needs(type: ResourceType, obj: KubeObject, desired: string): boolean {
    return type.custom !== undefined && obj.apiVersion !== desired;
  }

  /**
   * `objects` at `desired` (`group/version`), in order; objects already there are returned as they are.
   * Throws an {@link ApiStatusError} (500) when the conversion fails.
   */
  async convert(type: ResourceType, objects: readonly KubeObject[], desired: string): Promise<KubeObject[]> {
    const todo = objects.map((o, i) => ({ o, i })).filter(({ o }) => this.needs(type, o, desired));
    if (todo.length === 0) return [...objects];
    const spec = this.#spec(type);
    const first = todo[0]!.o;
    const gvk = `${first.apiVersion ?? ''}, Kind=${first.kind ?? type.kind}`;
    const converted = spec.conversion?.strategy === 'Webhook'
      ? await this.#webhook(spec, todo.map((t) => t.o), desired, gvk)
      : todo.map((t) => ({ ...cloneJson(t.o), apiVersion: desired }));
    const schema = spec.versions?.find((v) => apiVersionOf({ group: type.group, version: v.name ?? '' }) === desired)?.schema?.openAPIV3Schema;
    const out = [...objects];
    todo.forEach(({ i }, k) => {
      const obj = converted[k]!;
      if (schema) {
        pruneCustomResource(schema, obj);
        defaultCustomResource(schema, obj);
      }
      out[i] = obj;
    });
    return out;
  }

  async #webhook(spec: CrdConversionSpec, objects: readonly KubeObject[], desired: string, gvk: string): Promise<KubeObject[]> {
    const failed = (why: string): never => {
      throw new ApiStatusError(conversionFailure(`conversion webhook for ${gvk} failed: ${why}`));
    };
    const webhook = spec.conversion?.webhook;
    const review = buildReview(webhook?.conversionReviewVersions ?? [], objects, desired, randomUUID());
    if (review instanceof Error) return failed(review.message);
    const target = resolveTarget(webhook?.clientConfig ?? {}, this.#resolve);
    if (target instanceof Error) return failed(target.message);
    const caBundle = webhook?.clientConfig?.caBundle;
    const outcome = await postReview(target, this.#agents.get(target, caBundle), review.body);
    if (!outcome.ok) return failed(outcome.error);
    const converted = convertedObjectsOf(review, outcome.body);
    if (converted instanceof Error) return failed(converted.message);
    if (converted.length !== objects.length) {
      throw new ApiStatusError(conversionFailure(`conversion webhook for ${gvk} returned ${converted.length} objects, expected ${objects.length}`));
    }
    const single = objects.length === 1;
    return objects.map((original, i) => {
      const accepted = acceptConverted(original, converted[i], desired, i, single);
      if (accepted instanceof Error) throw new ApiStatusError(conversionFailure(`conversion webhook for ${gvk} ${accepted.message}`));
      return accepted;
    });
  }
}

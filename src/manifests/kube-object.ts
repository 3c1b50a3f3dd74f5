import { ApiObject, type ApiObjectProps } from 'cdk8s';
import type { Construct } from 'constructs';

/**
 * A Kubernetes object from its wire-form JSON, typed by the caller with the kubernetes-models
 * interface of its kind (`kubeObject<IDeployment>(…)`), imported as a type only, so nothing of it is
 * loaded at run time. Why not cdk8s-plus' `k8s` L1 classes: loading that 2.7 MB module was most of
 * `npm run synth`'s wall time, and the YAML is the same (cdk8s sorts keys when it synthesizes either
 * way); as a bonus, `x-kubernetes-*` keys need no camelCase detour.
 */
export function kubeObject<T extends { readonly apiVersion: string; readonly kind: string }>(scope: Construct, id: string, object: T): ApiObject {
  return new ApiObject(scope, id, object as unknown as ApiObjectProps);
}

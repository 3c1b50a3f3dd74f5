/** The Kubernetes API client: object shapes, errors, configuration, REST and typed resource clients. */
export * from './object.ts';
export * from './api-status-error.ts';
export { KubeConfig, SERVICE_ACCOUNT_DIR, type KubeAuth, type KubeConfigOptions, type KubeconfigLoadOptions } from './kube-config.ts';
export {
  KubeClient, KubeRequestError, gateWrites, statusErrorFromResponse,
  type KubeClientOptions, type KubeRequestOptions, type QueryParams, type RequestObservation,
} from './kube-client.ts';
export {
  ResourceClient,
  type CallOptions, type DeleteOptions, type ListOptions, type ObjectRef, type PatchType, type ResourceType, type WatchOptions, type WriteOptions,
} from './resource-client.ts';
export { decodeWatchStream, parseWatchLine, WatchDecodeError } from './watch-stream.ts';

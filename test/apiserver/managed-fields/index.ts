/** Field ownership (`metadata.managedFields`) and server-side apply of the test API server. */
export { applyConfiguration, trackUpdate, type ApplyOutcome, type ManagedWrite } from './managers.ts';

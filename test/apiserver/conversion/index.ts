/** Multi-version custom resources: conversion (None, Webhook) and the reads and writes that go through it. */
export { CustomResourceConverter, conversionFailure } from './crd-converter.ts';
export { type ServiceResolver, type WebhookClientConfig } from './webhook-client.ts';
export { convertingCreate, convertingUpdate, oneToRequestVersion, readCurrent, toRequestVersion, writeNeedsConversion, type KnownCurrent } from './versioned-writes.ts';

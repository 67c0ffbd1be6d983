// @aegis/sdk: the Aegis API client for Node.js 20+ and edge runtimes.
export { Aegis, Webhooks } from './client.ts';
export { Aegis as default } from './client.ts';
export { APIClient, SDK_VERSION, type ClientOptions, type Fetch, type RequestOptions, type Upload, type UploadBody, type UploadContent, type UploadOptions } from './transport.ts';
export { Page, PagePromise, type Pagination } from './pagination.ts';
export { EventStream, type StreamOptions } from './stream.ts';
export * from './errors.ts';
export { constructEvent, verifyWebhookSignature, SIGNATURE_HEADER, type VerifyOptions, type WebhookEvent } from './webhooks.ts';
export { API_VERSION, OPERATIONS } from './generated/resources.ts';
export * from './generated/resources.ts';
export type * from './generated/types.ts';

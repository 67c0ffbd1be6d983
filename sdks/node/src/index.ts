// @aegis/sdk: the Aegis API client for Node.js 20+ and edge runtimes.
export { Aegis, Webhooks } from './client.ts';
export { Aegis as default } from './client.ts';
export {
  APIClient,
  EventStream,
  Page,
  PagePromise,
  SDK_VERSION,
  type ClientOptions,
  type Fetch,
  type Pagination,
  type RequestOptions,
  type StreamOptions,
  type Upload,
  type UploadBody,
  type UploadContent,
  type UploadOptions,
} from './core.ts';
export * from './errors.ts';
export { constructEvent, verifyWebhookSignature, SIGNATURE_HEADER, type VerifyOptions, type WebhookEvent } from './webhooks.ts';
export { API_VERSION, OPERATIONS } from './generated/resources.ts';
export * from './generated/resources.ts';
export type * from './generated/types.ts';

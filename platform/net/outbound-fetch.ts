// A fetch for server-initiated HTTP requests under a policy (outbound-rules.ts): what providers'
// SDKs (OpenAI, Anthropic, Octokit), the provider connectors, OpenID Connect and SAML metadata are
// given instead of the global fetch. Every connection goes through outbound-connect.ts, so the
// address actually connected to is judged on every hop. Redirects are a decision of each use:
//
//   'refuse'        a 3xx comes back as it is and is not followed (the caller treats it as a
//                   failure; openid-client asks for exactly that);
//   { follow: n }   at most n hops, followed here one by one (never by undici): http(s) only, no
//                   https → http downgrade, each hop's connection judged by the policy; on a hop to
//                   another origin only headers that carry no credential are kept (Authorization,
//                   API keys, cookies stay with the origin they were meant for); 301/302 after a
//                   POST and 303 become a GET without a body, as browsers do; a body that cannot be
//                   sent twice (a stream) is not re-sent (the redirect is refused).
//
// The caller's `redirect: 'manual'` or `'error'` is honoured. Responses are capped (`maxBytes`: a
// declared length over the cap fails at once, a longer body errors while it is read) and the whole
// exchange has a deadline unless the caller brings its own signal. Responses are the global
// Response class (openid-client checks for it), with `url` and `redirected` set.
import { fetch as undiciFetch, type Agent } from 'undici';
import { outboundAgent } from './outbound-connect.ts';
import { RefusedAddressError, type OutboundPolicy } from './outbound-rules.ts';

export type RedirectHandling = 'refuse' | { follow: number };

export interface OutboundFetchOptions {
  redirects: RedirectHandling;
  /** Deadline of a request (connection, headers and body) when the caller passes no signal; default 30 s. */
  timeoutMs?: number;
  /** Largest response body read, in bytes; default 16 MiB. */
  maxBytes?: number;
  /** Connection timeout, ms (default 10 s). */
  connectTimeoutMs?: number;
}

/** A redirect this fetch will not follow (downgrade, scheme, too many, a body it cannot resend). */
export class RefusedRedirectError extends Error {
  override name = 'RefusedRedirectError';
}

/** Headers kept on a hop to another origin: none of them can carry a credential. */
const CROSS_ORIGIN_HEADERS = new Set(['accept', 'accept-encoding', 'accept-language', 'cache-control', 'content-language', 'content-type', 'pragma', 'user-agent']);
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

type UndiciInit = NonNullable<Parameters<typeof undiciFetch>[1]>;
type UndiciBody = UndiciInit['body'];

/** The body as undici takes it; `replayable` is false for a stream (it can be read once). */
function bodyOf(body: RequestInit['body']): { body: UndiciBody; replayable: boolean } {
  if (body === null || body === undefined) return { body: null, replayable: true };
  return { body: body as UndiciBody, replayable: !(body instanceof ReadableStream) };
}

/** The body, erroring once more than `maxBytes` have been read. */
function capped(body: ReadableStream<Uint8Array>, maxBytes: number, origin: string): ReadableStream<Uint8Array> {
  let read = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        read += chunk.byteLength;
        if (read > maxBytes) controller.error(new Error(`${origin} answered with more than ${maxBytes} bytes`));
        else controller.enqueue(chunk);
      },
    }),
  );
}

/** A fetch-compatible function whose connections are opened under `policy`. */
export function outboundFetch(policy: OutboundPolicy, options: OutboundFetchOptions): typeof fetch {
  const maxBytes = options.maxBytes ?? 16 * 1024 * 1024;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const agent: Agent = outboundAgent(policy, { timeoutMs: options.connectTimeoutMs ?? 10_000 });
  const maxHops = options.redirects === 'refuse' ? 0 : options.redirects.follow;

  const outbound = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const request = input instanceof Request ? input : null;
    let url = new URL(request ? request.url : input.toString());
    let method = (init.method ?? request?.method ?? 'GET').toUpperCase();
    let headers = new Headers(init.headers ?? request?.headers);
    let { body, replayable } = bodyOf(init.body !== undefined ? init.body : request?.body);
    const signal = init.signal ?? request?.signal ?? AbortSignal.timeout(timeoutMs);
    const callerRedirect = init.redirect ?? (request && request.redirect !== 'follow' ? request.redirect : undefined);

    for (let hop = 0; ; hop++) {
      if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new RefusedRedirectError(`${url.protocol} URLs are not fetched`);
      const answer = await undiciFetch(url, {
        method,
        headers: [...headers],
        body,
        signal,
        redirect: 'manual',
        dispatcher: agent,
        ...(body instanceof ReadableStream ? { duplex: 'half' as const } : {}),
      }).catch((err: unknown) => {
        // undici reports every connection failure as "fetch failed"; a refusal says why itself.
        throw refusalIn(err) ?? err;
      });
      const location = REDIRECT_STATUSES.has(answer.status) ? answer.headers.get('location') : null;
      if (location === null || callerRedirect === 'manual') return toResponse(answer, url, hop > 0, maxBytes);
      if (callerRedirect === 'error') {
        await answer.body?.cancel();
        throw new RefusedRedirectError(`${url.origin} answered ${answer.status} (a redirect) and redirects were not allowed`);
      }
      if (maxHops === 0) return toResponse(answer, url, hop > 0, maxBytes);
      await answer.body?.cancel();
      if (hop >= maxHops) throw new RefusedRedirectError(`${url.origin} redirected more than ${maxHops} times`);
      const next = new URL(location, url);
      if (next.protocol !== 'https:' && next.protocol !== 'http:') throw new RefusedRedirectError(`${url.origin} redirected to a ${next.protocol} URL, which is not followed`);
      if (url.protocol === 'https:' && next.protocol === 'http:') throw new RefusedRedirectError(`${url.origin} redirected from https to http (${next.origin}), which is not followed`);
      if (answer.status === 303 || ((answer.status === 301 || answer.status === 302) && method === 'POST')) {
        if (method !== 'HEAD') method = 'GET';
        body = null;
        replayable = true;
        for (const name of ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location']) headers.delete(name);
      } else if (!replayable) {
        throw new RefusedRedirectError(`${url.origin} answered ${answer.status} to a streamed request body, which cannot be sent again`);
      }
      if (next.origin !== url.origin) headers = new Headers([...headers].filter(([name]) => CROSS_ORIGIN_HEADERS.has(name)));
      url = next;
    }
  };
  return outbound as typeof fetch;
}

/** The policy's refusal among an error's causes (outbound-connect.ts fails connections with it), if any. */
function refusalIn(err: unknown): Error | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    const code: unknown = (e as Error & { code?: unknown }).code;
    if (e instanceof RefusedAddressError || (typeof code === 'string' && code.startsWith('EREFUSED_'))) return e;
  }
  return undefined;
}

type UndiciResponse = Awaited<ReturnType<typeof undiciFetch>>;

/** The answer as a global Response with a capped body. */
function toResponse(answer: UndiciResponse, url: URL, redirected: boolean, maxBytes: number): Response {
  const declared = Number(answer.headers.get('content-length') ?? 0);
  if (declared > maxBytes) {
    void answer.body?.cancel();
    throw new Error(`${url.origin} answered with ${declared} bytes; at most ${maxBytes} are read`);
  }
  const headers = new Headers();
  for (const [name, value] of answer.headers) headers.append(name, value);
  const body = NULL_BODY_STATUSES.has(answer.status) || answer.body === null ? null : capped(answer.body as ReadableStream<Uint8Array>, maxBytes, url.origin);
  const response = new Response(body, { status: answer.status, statusText: answer.statusText, headers });
  Object.defineProperty(response, 'url', { value: url.toString() });
  Object.defineProperty(response, 'redirected', { value: redirected });
  return response;
}

export { RefusedAddressError };

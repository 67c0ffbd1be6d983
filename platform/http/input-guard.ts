// The edge check for hostile text. PostgreSQL refuses NUL (U+0000) in text, and a lone UTF-16
// surrogate (U+D800–U+DFFF without its pair) cannot be encoded as UTF-8 at all; neither is ever
// meaningful input. Every path parameter, query value and JSON body (keys and values, at any
// depth) and every text body (CSV, YAML) is checked here once, before validation, so no route and
// no query ever sees them: the answer is 400 in the error envelope naming the field.
// Binary bodies (Buffers: archives, signed push deliveries) are left to their routes. Header values
// never need it: Node's HTTP parser refuses NUL and non-latin1 in headers before Fastify runs.
// Also here: the framework errors that arise before a route is found (bad percent-encoding, an
// over-long path parameter) and on the socket (malformed HTTP, oversize headers), in the envelope.
import type { Socket } from 'node:net';
import http from 'node:http';
import fp from 'fastify-plugin';
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, badRequest, codeForStatus } from './errors.ts';
import { toEnvelope } from './error-handler.ts';

const HOSTILE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** True when `text` holds a NUL or an unpaired surrogate. */
export const isHostileText = (text: string): boolean => HOSTILE.test(text);

const fieldName = (base: string, key: string | number): string =>
  typeof key === 'number' ? `${base}[${key}]` : /^[A-Za-z_$][\w$-]*$/.test(key) ? (base ? `${base}.${key}` : key) : `${base}[${JSON.stringify(key)}]`;

interface Node {
  value: unknown;
  key: string | number | undefined;
  parent: Node | undefined;
}

/** The dotted name of a node, built only for the one that is refused (every request walks its body). */
function pathOf(node: Node, root: string): string {
  const keys: (string | number)[] = [];
  for (let n: Node | undefined = node; n?.key !== undefined; n = n.parent) keys.unshift(n.key);
  return keys.reduce<string>((path, key) => fieldName(path, key), root);
}

/** The first field (keys and values, any depth) holding hostile text. Iterative: bodies may nest 10 000 deep. */
export function findHostileField(value: unknown, root: string): string | undefined {
  const stack: Node[] = [{ value, key: undefined, parent: undefined }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const current = node.value;
    if (typeof current === 'string') {
      if (isHostileText(current)) return pathOf(node, root) || root;
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push({ value: current[i], key: i, parent: node });
    } else if (current !== null && typeof current === 'object' && !Buffer.isBuffer(current)) {
      for (const [key, child] of Object.entries(current)) {
        const childNode = { value: child, key, parent: node };
        if (isHostileText(key)) return pathOf(childNode, root);
        stack.push(childNode);
      }
    }
  }
  return undefined;
}

function refuse(part: string, field: string): never {
  throw badRequest(`${field} contains a NUL character or an unpaired UTF-16 surrogate`, {
    fields: [{ field, in: part, message: 'must not contain NUL (U+0000) or an unpaired surrogate (U+D800–U+DFFF)' }],
  });
}

const inputGuard: FastifyPluginAsync = async (app) => {
  app.addHook('preValidation', async (request) => {
    for (const [part, value, prefix] of [
      ['path', request.params, ''],
      ['query', request.query, ''],
      ['body', request.body, ''],
    ] as const) {
      if (value === undefined || value === null) continue;
      const field = findHostileField(value, prefix);
      if (field !== undefined) refuse(part, field || part);
    }
  });
};

export default fp(inputGuard, { name: 'aegis-input-guard' });

/** Fastify's `frameworkErrors`: a path that does not decode (`%zz`, invalid UTF-8) or a path parameter over `maxParamLength`. */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const { status, body } = toEnvelope(error);
  void reply.code(status).type('application/json; charset=utf-8').send(body);
}

/** Fastify's `clientErrorHandler`: the request never parsed as HTTP, so answer on the socket, in the envelope. */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const status = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
  const message = status === 408 ? 'the request took too long to arrive' : status === 431 ? 'the request headers are too large' : 'the request is not valid HTTP';
  const body = JSON.stringify(toEnvelope(new ApiError(status, codeForStatus[status]!, message)).body);
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy(error);
}

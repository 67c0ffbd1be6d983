// How the stand-in answers over HTTP: JSON with GitHub's media-type header, and refusals that are
// also recorded in `rejected` (tests expect it to stay empty, so a mismatch with GitHub shows).
import type { ServerResponse } from 'node:http';
import { DOCS, type StandInContext } from './context.ts';

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'x-github-media-type': 'github.v3; format=json', ...headers });
  res.end(body === undefined ? '' : JSON.stringify(body));
}

export function refuse(ctx: StandInContext, res: ServerResponse, what: string, status: number, body: unknown): void {
  ctx.standIn.rejected.push(what);
  json(res, status, body);
}

export const notFound = (res: ServerResponse): void => json(res, 404, { message: 'Not Found', documentation_url: DOCS, status: '404' });

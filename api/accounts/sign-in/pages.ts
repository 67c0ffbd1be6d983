// The few HTML pages sign-in needs before there is a dashboard: enter an address, confirm a link
// (a GET never signs in: mail scanners fetch links), and results. No script and no inline style:
// the Content-Security-Policy allows neither. Their URLs can carry tokens, so no other site is
// ever sent them as a Referer (`same-origin`, not `no-referrer`: that would make the browser post
// the page's own forms with `Origin: null`).
import type { FastifyReply, FastifyRequest } from 'fastify';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);

/** Whether the caller is a browser navigating (it asks for HTML), not an API client. */
export const acceptsHtml = (request: FastifyRequest): boolean => /\btext\/html\b/.test(request.headers.accept ?? '');

export const PAGE_CSP = "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** A form that posts `fields` (hidden) to `action` with one button. */
export function postForm(action: string, fields: Record<string, string>, button: string): string {
  const hidden = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
  return `<form method="post" action="${escapeHtml(action)}">${hidden}<button type="submit">${escapeHtml(button)}</button></form>`;
}

export function sendPage(reply: FastifyReply, status: number, title: string, bodyHtml: string): FastifyReply {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('Content-Security-Policy', PAGE_CSP)
    .header('Cache-Control', 'no-store')
    .header('Referrer-Policy', 'same-origin')
    .header('X-Frame-Options', 'DENY')
    .send(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} · Aegis</title></head><body><h1>${escapeHtml(title)}</h1>${bodyHtml}</body></html>`);
}
